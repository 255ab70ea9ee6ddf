#pragma once

// What a FOCUS import found beyond the kept rows, as `gpucost actuals import focus` and
// POST /v1/actuals both report it (docs/billing.md "Each cloud's conventions" and "Showback").

#include <string>

#include "pricing/actuals.hpp"
#include "service/text/json_text.hpp"

namespace gpucost::text {

// The members `corrections` (kept rows that correct an earlier period), `converted_to_usd`
// (rows converted with the export's own rate, by original currency and rate column),
// `unused_commitment` (reserved hours nobody used: commitment waste by currency, tag value
// and commitment) and `showback` (null without `group_by`; else the kept rows' totals by
// currency and the value of Tags key `group_by`, the untagged remainder under null), added to
// `report`.
void AddActualsFindings(const pricing::ActualsReport& r, const std::string& group_by, json& report);

}  // namespace gpucost::text
