#include "service/ports/memory/memory_actuals_store.hpp"

#include <algorithm>
#include <tuple>

#include "pricing/usd_sum.hpp"

namespace gpucost::ports {

void MemoryActualsStore::AddTeam(const std::string& team) {
    std::lock_guard lock(mutex_);
    teams_.insert(team);
}

pricing::Result<StoredResponse> MemoryActualsStore::Import(const WriteRequest& request,
                                                           const std::string& tag_key,
                                                           const ExportReader& read,
                                                           const ImportEncoder& encode) {
    std::lock_guard lock(mutex_);
    return answers_.Once(request, [&]() -> pricing::Result<StoredResponse> {
        const std::string& team = request.principal.team;
        if (!teams_.contains(team)) {
            return pricing::MakeError(
                pricing::ErrorCode::kInvalidArgument,
                "no team '" + team + "' (gpucost apikey create --team makes one)", "team");
        }
        ActualsImport out{next_import_id_, 0, 0};
        std::vector<StoredCharge> added;
        std::set<std::pair<std::string, std::string>> ids = row_ids_;
        std::size_t charges = 0;
        auto counts = read([&](const pricing::ActualCharge& c) {
            ++charges;
            if (ids.emplace(team, c.row_id).second) added.push_back({out.id, team, c});
        });
        if (!counts.ok()) return counts.error();  // nothing stored
        ++next_import_id_;
        out.added = added.size();
        out.already_imported = charges - out.added;
        imports_[out.id] = ActualsImportRecord{out.id,
                                               team,
                                               request.principal.name,
                                               now_us_,
                                               tag_key,
                                               counts.value().rows_read,
                                               counts.value().kept,
                                               out.added,
                                               out.added};
        row_ids_ = std::move(ids);
        charges_.insert(charges_.end(), added.begin(), added.end());
        return encode(out);
    });
}

pricing::Result<std::vector<ActualMonth>> MemoryActualsStore::MonthsTagged(
    std::string_view tag_key, std::string_view tag_value, std::string_view team) {
    std::lock_guard lock(mutex_);
    struct Sums {
        std::size_t rows = 0;
        long double hours = 0;
        pricing::UsdSum billed, effective, list;
    };
    // Sums kept exactly (as the database's numeric sums are); by (currency, month) ascending.
    std::map<std::pair<std::string, std::string>, Sums> by_month;
    for (const StoredCharge& s : charges_) {
        const auto import = imports_.find(s.import_id);
        if (s.team != team || s.charge.tag_value != tag_value || s.charge.tag_value.empty() ||
            import == imports_.end() || import->second.tag_key != tag_key) {
            continue;
        }
        Sums& sums = by_month[{s.charge.billing_currency, s.charge.month}];
        ++sums.rows;
        sums.hours += static_cast<long double>(s.charge.accelerator_hours);
        sums.billed.Add(s.charge.billed_cost);
        sums.effective.Add(s.charge.effective_cost);
        sums.list.Add(s.charge.list_cost);
    }
    std::vector<ActualMonth> out;
    out.reserve(by_month.size());
    for (const auto& [key, sums] : by_month) {
        out.push_back({key.first, key.second, sums.rows, static_cast<double>(sums.hours),
                       sums.billed.RoundedToCents(), sums.effective.RoundedToCents(),
                       sums.list.RoundedToCents()});
    }
    return out;
}

pricing::Result<std::vector<ActualClassMonth>> MemoryActualsStore::ClassesTagged(
    std::string_view tag_key, std::string_view tag_value, std::string_view team) {
    std::lock_guard lock(mutex_);
    struct Sums {
        long double hours = 0;
        pricing::UsdSum effective;
    };
    // By (currency, month, category, offering) ascending, as the database groups them.
    std::map<std::tuple<std::string, std::string, std::string, std::string>, Sums> by_class;
    for (const StoredCharge& s : charges_) {
        const auto import = imports_.find(s.import_id);
        if (s.team != team || s.charge.tag_value != tag_value || s.charge.tag_value.empty() ||
            import == imports_.end() || import->second.tag_key != tag_key) {
            continue;
        }
        Sums& sums = by_class[{s.charge.billing_currency, s.charge.month, s.charge.pricing_category,
                               s.charge.offering_id}];
        sums.hours += static_cast<long double>(s.charge.accelerator_hours);
        sums.effective.Add(s.charge.effective_cost);
    }
    std::vector<ActualClassMonth> out;
    out.reserve(by_class.size());
    for (const auto& [key, sums] : by_class) {
        out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key),
                       static_cast<double>(sums.hours), sums.effective.RoundedToCents()});
    }
    return out;
}

pricing::Result<std::pair<std::vector<ActualsImportRecord>, std::size_t>>
MemoryActualsStore::ListImports(std::string_view team, std::size_t limit, std::int64_t before) {
    std::lock_guard lock(mutex_);
    std::pair<std::vector<ActualsImportRecord>, std::size_t> out;
    for (auto i = imports_.rbegin(); i != imports_.rend(); ++i) {
        if (!team.empty() && i->second.team != team) continue;
        ++out.second;
        if ((before == 0 || i->first < before) && out.first.size() < limit) {
            out.first.push_back(i->second);
        }
    }
    return out;
}

pricing::Result<StoredResponse> MemoryActualsStore::DeleteImport(const WriteRequest& request,
                                                                 std::int64_t id) {
    std::lock_guard lock(mutex_);
    return answers_.Once(request, [&]() -> pricing::Result<StoredResponse> {
        const auto found = imports_.find(id);
        if (found == imports_.end() || found->second.team != request.principal.team) {
            return pricing::MakeError(pricing::ErrorCode::kNotFound,
                                      "no actuals import with id " + std::to_string(id) +
                                          " of team '" + request.principal.team + "'",
                                      "id");
        }
        std::erase_if(charges_, [&](const StoredCharge& s) {
            if (s.import_id != id) return false;
            row_ids_.erase({s.team, s.charge.row_id});
            return true;
        });
        imports_.erase(found);
        return DeletedAnswer();
    });
}

}  // namespace gpucost::ports
