#include <algorithm>

#include "service/http/codec/json_codec.hpp"
#include "service/http/codec/model_codec.hpp"
#include "service/http/codec/problem.hpp"
#include "service/http/codec/query_params.hpp"
#include "service/http/route_table.hpp"

namespace gpucost::http {

// GET /v1/models (optionally ?family=llama) and GET /v1/models/{id}: the model library.
void AddModelRoutes(RouteTable& routes, const Deps& deps) {
    routes.Get("/v1/models", [deps](const httplib::Request& req, httplib::Response& res) {
        QueryParams params(req, {"family"});
        if (auto checked = params.Check(); !checked.ok()) {
            return WriteProblem(res, req, checked.error());
        }
        const std::vector<std::string> families = params.List("family");
        json items = json::array();
        for (const pricing::LibraryModel& m : ModelsOf(deps).All()) {
            if (families.empty() ||
                std::find(families.begin(), families.end(), m.family) != families.end()) {
                items.push_back(LibraryModelJson(m, false));
            }
        }
        WriteJson(res, {{"total_count", items.size()}, {"items", std::move(items)}});
    });

    routes.Get(std::string("/v1/models/") + kIdPattern, [deps](const httplib::Request& req,
                                                               httplib::Response& res) {
        if (auto checked = QueryParams(req, {}).Check(); !checked.ok()) {
            return WriteProblem(res, req, checked.error());
        }
        const std::string id = req.matches[1].str();
        const pricing::ModelLibrary& models = ModelsOf(deps);
        const pricing::LibraryModel* found = models.Find(id);
        if (found == nullptr) {
            std::string closest;
            for (const std::string& c : models.Closest(id, 5)) {
                closest += (closest.empty() ? "" : ", ") + c;
            }
            return WriteProblem(res, req,
                                pricing::MakeError(pricing::ErrorCode::kNotFound,
                                                   "no model '" + id.substr(0, 64) +
                                                       "' in the library; closest ids: " + closest,
                                                   "id"));
        }
        WriteJson(res, LibraryModelJson(*found, true));
    });
}

}  // namespace gpucost::http
