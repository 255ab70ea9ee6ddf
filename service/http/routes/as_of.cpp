#include "service/http/routes/as_of.hpp"

#include "service/http/codec/timestamp.hpp"

namespace gpucost::http {

pricing::Result<std::shared_ptr<const pricing::Catalog>> CatalogAsOf(
    const Deps& deps, const std::optional<std::string>& as_of) {
    if (!as_of) {
        return deps.catalog();
    }
    auto at = ParseAsOf(*as_of, kAsOfParam);
    if (!at.ok()) {
        return at.error();
    }
    if (!deps.history) {
        return pricing::MakeError(pricing::ErrorCode::kDatabaseRequired,
                                  "as_of needs price history, which only PostgreSQL mode keeps: "
                                  "start gpucost with DATABASE_URL",
                                  kAsOfParam);
    }
    return deps.history->At(at.value());
}

pricing::Result<std::shared_ptr<const pricing::Catalog>> CatalogForQuery(
    const Deps& deps, const QueryParams& params) {
    auto as_of = params.One(kAsOfParam);
    if (!as_of.ok()) {
        return as_of.error();
    }
    return CatalogAsOf(deps, as_of.value());
}

}  // namespace gpucost::http
