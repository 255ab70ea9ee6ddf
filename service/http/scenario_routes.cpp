// Saved scenarios (PostgreSQL mode): named plan requests, re-evaluated on demand.
#include "service/http/router.hpp"

namespace gpucost::http {

void AddScenarioRoutes(RouteTable& /*routes*/, const Deps& /*deps*/) {}

}  // namespace gpucost::http
