#pragma once

// Owned capacity as a ledger: a stored book's reservations are drawn by the saved plans that
// use them, one after another in a stated order, so that no two plans count the same reserved
// instance-hour and each says how many it got and who holds the rest (docs/billing.md, "The
// owned-capacity ledger").

#include <map>
#include <string>
#include <vector>

#include "pricing/price_book.hpp"

namespace gpucost::pricing {

// What one plan runs on a book's owned offering: `nodes` instances of `offering_id` over
// [start_hour, end_hour) (hours since 1970-01-01 UTC), as its recommendation runs them.
struct OwnedHolding {
    std::string holder;  // who draws: a saved scenario's id, or "this plan"
    std::string offering_id;
    int nodes = 0;
    double start_hour = 0;
    double end_hour = 0;
};

// What one holding got from the ledger: instance-hours by calendar month (YYYY-MM) and in all,
// and those hours at the commitments' rates.
struct OwnedDraw {
    std::string holder;
    std::string offering_id;
    std::map<std::string, double> instance_hours_by_month;
    double instance_hours = 0;
    double sunk_usd = 0;
};

// The book's owned capacity after the holdings drew from it in order, and what each got.
struct OwnedLedger {
    // The entries' parts nobody holds, in the book's order (each part keeps its entry's
    // offering and rate, with from_hour/until_hour): what a plan after the holdings may use,
    // through CoverRun as it would use the book's own list.
    std::vector<OwnedCapacity> left;
    std::vector<OwnedDraw> draws;  // one per holding, in order
};

// Draws `holdings` in order from `owned`: each takes, at every moment of its span, up to its
// nodes from what the holdings before it left, entries in list order (CoverRun's rule), so the
// holdings' instance-hours never exceed those owned.
OwnedLedger DrawInOrder(const std::vector<OwnedCapacity>& owned,
                        const std::vector<OwnedHolding>& holdings);

// Owned instance-hours by calendar month (YYYY-MM) and offering id: what the entries of
// `owned` hold, month by month (the months any entry touches).
std::map<std::string, std::map<std::string, double>> OwnedHoursByMonth(
    const std::vector<OwnedCapacity>& owned);

}  // namespace gpucost::pricing
