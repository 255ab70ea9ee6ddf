#include "pricing/actuals.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "pricing/catalog_loader.hpp"

namespace gpucost::pricing {

const char* SkipReasonName(SkipReason reason) {
    switch (reason) {
        case SkipReason::kNonAccelerator:
            return "non_accelerator";
        case SkipReason::kCredit:
            return "credit";
        case SkipReason::kTax:
            return "tax";
        case SkipReason::kPurchase:
            return "purchase";
        case SkipReason::kAdjustment:
            return "adjustment";
        case SkipReason::kUnknownSku:
            return "unknown_sku";
        case SkipReason::kUnknownProvider:
            return "unknown_provider";
        case SkipReason::kMarketplace:
            return "marketplace";
        case SkipReason::kUnusedCommitment:
            return "unused_commitment";
    }
    return "unknown";
}

void ActualTotals::Add(const ActualCharge& c) {
    ++rows;
    accelerator_hours += c.accelerator_hours;
    billed_cost += c.billed_cost;
    effective_cost += c.effective_cost;
    list_cost += c.list_cost;
}

void ActualsReport::Keep(const ActualCharge& c) {
    ++kept;
    by_currency[c.billing_currency].Add(c);
    by_currency_month[{c.billing_currency, c.month}].Add(c);
    by_currency_tag[{c.billing_currency, c.tag_value}].Add(c);
    by_currency_group[{c.billing_currency, c.group_value}].Add(c);
    if (c.correction) ++corrections;
}

void ActualsReport::Unused(const ActualCharge& c, const std::string& commitment_id) {
    Skip(SkipReason::kUnusedCommitment, commitment_id.empty() ? c.sku : commitment_id);
    unused_commitment[{c.billing_currency, c.tag_value, commitment_id}].Add(c);
}

void ActualsReport::Skip(SkipReason reason, const std::string& example) {
    const std::string name = SkipReasonName(reason);
    ++skipped[name];
    skipped_examples.emplace(name, example);
}

namespace {

// Whether text[from, from + count) is all digits, read into `out`.
bool Digits(std::string_view text, std::size_t from, std::size_t count, int& out) {
    if (from + count > text.size()) return false;
    out = 0;
    for (std::size_t i = from; i < from + count; ++i) {
        if (text[i] < '0' || text[i] > '9') return false;
        out = out * 10 + (text[i] - '0');
    }
    return true;
}

// Whether `text` is hh:mm[:ss[.fraction]] followed by nothing, Z, +hh:mm or +hhmm.
bool IsTimeOfDay(std::string_view text) {
    int hour = 0, minute = 0, second = 0;
    if (!Digits(text, 0, 2, hour) || text.size() < 5 || text[2] != ':' ||
        !Digits(text, 3, 2, minute) || hour > 23 || minute > 59) {
        return false;
    }
    std::size_t at = 5;
    if (at < text.size() && text[at] == ':') {
        if (!Digits(text, at + 1, 2, second) || second > 60) return false;  // 60: a leap second
        at += 3;
        if (at < text.size() && text[at] == '.') {
            const std::size_t first = ++at;
            while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
            if (at == first) return false;
        }
    }
    const std::string_view zone = text.substr(at);
    if (zone.empty() || zone == "Z") return true;
    int zone_hour = 0, zone_minute = 0;
    if (zone[0] != '+' && zone[0] != '-') return false;
    if (zone.size() == 6 && zone[3] == ':') {
        return Digits(zone, 1, 2, zone_hour) && Digits(zone, 4, 2, zone_minute) &&
               zone_hour <= 23 && zone_minute <= 59;
    }
    return zone.size() == 5 && Digits(zone, 1, 2, zone_hour) && Digits(zone, 3, 2, zone_minute) &&
           zone_hour <= 23 && zone_minute <= 59;
}

std::string Bounds(double low, double high) {
    auto text = [](double v) {
        char buffer[32];
        auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
        return std::string(buffer, ec == std::errc() ? end : buffer);
    };
    return "is outside " + text(low) + " to " + text(high);
}

}  // namespace

std::string ChargeAmountFault(double value) {
    if (!std::isfinite(value)) return "is not a finite number";
    if (value < -kMaxChargeAmount || value > kMaxChargeAmount) {
        return Bounds(-kMaxChargeAmount, kMaxChargeAmount);
    }
    return "";
}

std::string ConsumedQuantityFault(double value) {
    if (!std::isfinite(value)) return "is not a finite number";
    if (value < 0 || value > kMaxConsumedQuantity) return Bounds(0, kMaxConsumedQuantity);
    return "";
}

std::string ChargePeriodFault(std::string_view text) {
    const std::string date(text.substr(0, 10));
    const bool time_ok =
        text.size() == 10 ||
        (text.size() > 11 && (text[10] == 'T' || text[10] == ' ') && IsTimeOfDay(text.substr(11)));
    if (!IsIsoDate(date) || !time_ok) {
        return "is not an ISO 8601 date or date-time (YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ)";
    }
    int year = 0;
    Digits(date, 0, 4, year);
    if (year < kFirstChargeYear || year > kLastChargeYear) {
        return "is outside the years " + std::to_string(kFirstChargeYear) + " to " +
               std::to_string(kLastChargeYear);
    }
    return "";
}

bool IsCleanUtf8(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        const auto lead = static_cast<unsigned char>(text[i]);
        if (lead == 0) return false;
        std::size_t length = 1;
        unsigned min = 0;
        unsigned cp = lead;
        if (lead >= 0x80) {
            if ((lead & 0xE0) == 0xC0) {
                length = 2, min = 0x80, cp = lead & 0x1F;
            } else if ((lead & 0xF0) == 0xE0) {
                length = 3, min = 0x800, cp = lead & 0x0F;
            } else if ((lead & 0xF8) == 0xF0) {
                length = 4, min = 0x10000, cp = lead & 0x07;
            } else {
                return false;
            }
        }
        if (i + length > text.size()) return false;
        for (std::size_t k = 1; k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            if ((next & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (next & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += length;
    }
    return true;
}

bool IsCurrencyCode(std::string_view text) {
    return text.size() == 3 &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

}  // namespace gpucost::pricing
