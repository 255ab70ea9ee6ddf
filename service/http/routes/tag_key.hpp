#pragma once
// The FOCUS Tags key that attributes imported charges to saved scenarios (
// docs/billing.md): `?tag_key=` of POST /v1/actuals and GET /v1/scenarios/{id}/actuals, and
// `calibration.tag_key` of a training plan, checked alike.
#include <string>
#include <string_view>

#include "pricing/error.hpp"

namespace gpucost::http {

// 1 to kMaxActualsTagKeyBytes bytes of UTF-8 without control characters (C0, DEL): a key as
// the clouds allow them, storable as PostgreSQL text and echoed as JSON unaltered. Otherwise
// kInvalidArgument naming `field`.
pricing::Status CheckActualsTagKey(std::string_view key, const std::string& field);

}  // namespace gpucost::http
