#pragma once

#include <string_view>

#include "service/http/route_table.hpp"

namespace gpucost::http {

// Whether an Accept value admits `media_type` (type/subtype; parameters ignored): the most
// specific matching range (type/subtype, type/*, */*) has q > 0 (RFC 9110 §12.5.1). An Accept
// with no readable range admits everything.
bool AcceptAdmits(std::string_view accept, std::string_view media_type);

// Every route added before it answers 406 (WriteNotAcceptable) when its successful answer's
// media type is one the request's Accept does not admit; writes (DELETE, KeyedBodyRoutes) are
// refused so before they run unless Accept admits application/json, their only answer.
void AddContentNegotiation(RouteTable& routes);

}  // namespace gpucost::http
