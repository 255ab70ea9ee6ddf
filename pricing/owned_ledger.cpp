#include "pricing/owned_ledger.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "pricing/calendar.hpp"
#include "pricing/offering.hpp"

namespace gpucost::pricing {
namespace {

// The calendar month (YYYY-MM) an hour since 1970 falls in.
std::string MonthOfHour(double hour) {
    return IsoDateFromDays(static_cast<long long>(std::floor(hour / kHoursPerDay))).substr(0, 7);
}

// The first hours of the calendar months strictly inside (start_hour, end_hour).
std::vector<double> MonthStartsWithin(double start_hour, double end_hour) {
    std::vector<double> out;
    const auto first_day = static_cast<long long>(std::floor(start_hour / kHoursPerDay));
    const std::string month = IsoDateFromDays(first_day).substr(0, 7);
    long long day = *DaysFromIsoDate(month + "-01");
    for (int m = 1;; ++m) {
        const double hour = static_cast<double>(AddCalendarMonths(day, m)) * kHoursPerDay;
        if (hour >= end_hour) break;
        if (hour > start_hour) out.push_back(hour);
    }
    return out;
}

// An entry's part over [from, until) with `nodes` instances.
OwnedCapacity Part(const OwnedCapacity& entry, double from, double until, int nodes) {
    OwnedCapacity part = entry;
    part.from_hour = from;
    part.until_hour = until;
    part.nodes = nodes;
    return part;
}

// `left` with every part of the holding's offering that overlaps its span cut at `cuts`, in
// the same order, so each part lies inside one stretch between two cuts or outside the span.
std::vector<OwnedCapacity> CutParts(const std::vector<OwnedCapacity>& left, const OwnedHolding& h,
                                    const std::vector<double>& cuts) {
    std::vector<OwnedCapacity> out;
    for (const OwnedCapacity& c : left) {
        const auto span = OwnedSpanHours(c);
        if (!span || IdKey(c.offering_id) != IdKey(h.offering_id) || span->second <= h.start_hour ||
            span->first >= h.end_hour) {
            out.push_back(c);
            continue;
        }
        double from = span->first;
        for (double cut : cuts) {
            if (cut <= from || cut >= span->second) continue;
            out.push_back(Part(c, from, cut, c.nodes));
            from = cut;
        }
        out.push_back(Part(c, from, span->second, c.nodes));
    }
    return out;
}

// Neighbouring parts of one entry with the same instances left are one part again, so the
// list does not grow with every holding's month cuts.
std::vector<OwnedCapacity> Merged(std::vector<OwnedCapacity> parts) {
    std::vector<OwnedCapacity> out;
    for (OwnedCapacity& p : parts) {
        if (p.nodes < 1) continue;
        if (!out.empty()) {
            OwnedCapacity& last = out.back();
            const auto a = OwnedSpanHours(last);
            const auto b = OwnedSpanHours(p);
            if (a && b && last.offering_id == p.offering_id && last.nodes == p.nodes &&
                last.usd_per_hour == p.usd_per_hour && last.start_date == p.start_date &&
                last.end_date == p.end_date && a->second == b->first) {
                last.until_hour = b->second;
                continue;
            }
        }
        out.push_back(std::move(p));
    }
    return out;
}

// One holding drawn from `left` (which it reduces): stretch by stretch, instances from the
// parts in list order until the holding has its nodes.
OwnedDraw Draw(std::vector<OwnedCapacity>& left, const OwnedHolding& h) {
    OwnedDraw draw{h.holder, h.offering_id, {}, 0, 0};
    if (h.nodes < 1 || h.end_hour <= h.start_hour) return draw;
    std::vector<double> cuts = MonthStartsWithin(h.start_hour, h.end_hour);
    cuts.push_back(h.start_hour);
    cuts.push_back(h.end_hour);
    for (const OwnedCapacity& c : left) {
        if (const auto span = OwnedSpanHours(c); span) {
            cuts.push_back(std::clamp(span->first, h.start_hour, h.end_hour));
            cuts.push_back(std::clamp(span->second, h.start_hour, h.end_hour));
        }
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    left = CutParts(left, h, cuts);
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
        const double a = cuts[k];
        const double b = cuts[k + 1];
        int wanted = h.nodes;
        for (OwnedCapacity& c : left) {
            if (wanted == 0) break;
            const auto span = OwnedSpanHours(c);
            if (!span || IdKey(c.offering_id) != IdKey(h.offering_id) || span->first > a ||
                span->second < b || c.nodes < 1) {
                continue;
            }
            const int taken = std::min(wanted, c.nodes);
            wanted -= taken;
            c.nodes -= taken;
            draw.instance_hours_by_month[MonthOfHour(a)] += taken * (b - a);
            draw.instance_hours += taken * (b - a);
            draw.sunk_usd += taken * (b - a) * c.usd_per_hour;
        }
    }
    for (auto& [month, hours] : draw.instance_hours_by_month) hours = StatedOwnedHours(hours);
    draw.instance_hours = StatedOwnedHours(draw.instance_hours);
    left = Merged(std::move(left));
    return draw;
}

}  // namespace

OwnedLedger DrawInOrder(const std::vector<OwnedCapacity>& owned,
                        const std::vector<OwnedHolding>& holdings) {
    OwnedLedger ledger;
    ledger.left = owned;
    for (const OwnedHolding& h : holdings) ledger.draws.push_back(Draw(ledger.left, h));
    return ledger;
}

std::map<std::string, std::map<std::string, double>> OwnedHoursByMonth(
    const std::vector<OwnedCapacity>& owned) {
    std::map<std::string, std::map<std::string, double>> out;
    for (const OwnedCapacity& c : owned) {
        const auto span = OwnedSpanHours(c);
        if (!span || span->second <= span->first) continue;
        // Built front to back: GCC 12 at -O3 reads an insert at begin() as a possible null
        // dereference (-Werror=null-dereference in the release build).
        const std::vector<double> starts = MonthStartsWithin(span->first, span->second);
        std::vector<double> cuts;
        cuts.reserve(starts.size() + 2);
        cuts.push_back(span->first);
        cuts.insert(cuts.end(), starts.begin(), starts.end());
        cuts.push_back(span->second);
        for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
            double& hours = out[MonthOfHour(cuts[k])][c.offering_id];
            hours = StatedOwnedHours(hours + c.nodes * (cuts[k + 1] - cuts[k]));
        }
    }
    return out;
}

}  // namespace gpucost::pricing
