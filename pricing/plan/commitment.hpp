#pragma once
// The commitment a portfolio of saved plans should buy, from their PLANNED demand
// (docs/billing.md, "The commitment a portfolio should buy"): the instances each saved training
// run and serving fleet will run, net of the capacity a book already owns, laid out in layers
// (the first instance of an offering is needed whenever anything runs, the second only while
// two are), and each layer reserved for the term that saves the most against on-demand, or not
// at all. Every figure is what the plans say, never past usage.

#include <optional>
#include <string>
#include <vector>

#include "pricing/assumption.hpp"
#include "pricing/catalog.hpp"
#include "pricing/offering.hpp"
#include "pricing/owned_ledger.hpp"
#include "pricing/price_book.hpp"

namespace gpucost::pricing::plan {

// A reservation term in hours: AWS defines a year as 31,536,000 s (365 days) and three years
// as 94,608,000 s (1,095 days) (Amazon EC2 User Guide, "Reserved Instances": term); Google's
// 1- and 3-year committed-use terms and Azure's reservation terms are the same lengths.
inline constexpr double kCommit1yTermHours = 365 * 24.0;
inline constexpr double kCommit3yTermHours = 1095 * 24.0;
// How much later a plan may start than saved, for the slip risk (request: `slip_days`): one
// quarter, the cadence at which a portfolio of plans is usually re-planned; judgement.
inline constexpr double kDefaultSlipDays = 90;
// The longest slip asked about: a 3-year term.
inline constexpr double kMaxSlipDays = 1095;

// What one saved plan will run: `nodes` instances of `offering` over [start_hour, end_hour)
// (hours since 1970-01-01 UTC, end at its expected duration). A training run's p10/p90
// durations are its expected one over/times (1 + kDefaultEfficiencySpreadFraction), log-normal
// as its cost_usd_p10/p90 are; a serving fleet ("inference") runs its fixed budget window.
struct PlannedDemand {
    std::string holder;  // the saved scenario's id
    std::string plan_kind;
    const Offering* offering = nullptr;
    int nodes = 0;
    double start_hour = 0;
    double end_hour = 0;
    // A training run's p90 duration over its expected one, less 1: its own plan's
    // efficiency_spread_fraction (the saved answer's echo); none: the training plans' default.
    std::optional<double> duration_spread_fraction;
};

struct CommitmentRequest {
    std::vector<PlannedDemand> demand;
    std::vector<OwnedCapacity> owned;  // the book's: covers demand before anything is bought
    std::optional<double> start_hour;  // when the terms begin; none: the earliest planned start
    double slip_days = kDefaultSlipDays;
    bool slip_days_given = false;
};

// A reservation of `instances` over its term under one what-if of the demand.
struct CommitmentOutcome {
    double used_instance_hours = 0;
    double unused_instance_hours = 0;
    double utilisation = 0;      // used / (instances x term hours)
    double unused_cost_usd = 0;  // unused hours at the commitment's rate: paid for nothing
    double saving_usd = 0;       // used hours at on-demand - the commitment's cost
};

// One calendar month of a line's term (the first from the term's start, the last to its end):
// the instance-hours it reserves and those the saved plans use of them, so a FOCUS forecast
// writes each month's purchase apart from its used and unused hours.
struct CommitmentMonth {
    double from_hour = 0;  // hours since 1970-01-01 UTC, as the line's start_hour
    double until_hour = 0;
    double reserved_instance_hours = 0;
    double used_instance_hours = 0;
};

// Reserve `instances` of `commitment` (the on-demand offering's commit_1y/commit_3y sibling:
// same provider, instance type and region) from `start_hour` for its term.
struct CommitmentLine {
    const Offering* on_demand = nullptr;
    const Offering* commitment = nullptr;
    double term_hours = 0;
    int instances = 0;
    double start_hour = 0;
    double on_demand_usd_per_hour = 0;  // per instance, as priced (a book's or list)
    double commit_usd_per_hour = 0;     // per instance
    double break_even_utilisation = 0;  // commit / on-demand: below it a layer loses money
    double commitment_cost_usd = 0;     // instances x term hours x commit rate
    CommitmentOutcome expected;         // the plans as saved (p50 durations)
    CommitmentOutcome p10_duration;     // runs as short as their p10
    CommitmentOutcome p90_duration;     // runs as long as their p90
    CommitmentOutcome slipped;          // every plan starting slip_days later
    // The term by calendar month, as saved: the months' used hours add up to expected's.
    std::vector<CommitmentMonth> months;
};

// The planned demand of one on-demand offering: its peak, instance-hours, what owned capacity
// covers, and what is left to buy for (or why nothing is offered).
struct OfferingDemand {
    const Offering* on_demand = nullptr;
    int peak_instances = 0;
    double planned_instance_hours = 0;
    double owned_instance_hours = 0;  // of the planned hours, covered by the book's owned capacity
    std::vector<const Offering*> terms_offered;
};

// A saved plan not counted, and why.
struct SkippedDemand {
    std::string holder;
    std::string reason;
};

struct CommitmentPlan {
    double start_hour = 0;
    std::vector<OfferingDemand> demand;
    std::vector<CommitmentLine> lines;  // by offering, then 3-year before 1-year
    std::vector<SkippedDemand> skipped;
    double commitment_cost_usd = 0;
    double expected_saving_usd = 0;
    double slipped_saving_usd = 0;
    Assumptions assumptions;
};

// Commitments from planned demand on `catalog` (prices as the caller's book sees them). Each
// counted plan's offering maps to its on-demand sibling; spot, capacity blocks and plans that
// already buy a term are skipped (a reservation replaces on-demand hours). Per offering, layer
// k (the k-th instance running at once, net of owned capacity) is reserved for the term whose
// saving over its used hours is largest and positive; layers of one term are one line.
CommitmentPlan RecommendCommitments(const Catalog& catalog, const CommitmentRequest& request);

// One month of one owned offering (a book's owned_capacity) against the saved plans: how much of
// what is reserved the plans hold (utilisation) and how much of the plans' demand of that shape
// the reservation covers (coverage).
struct OwnedMonthUse {
    std::string month;        // YYYY-MM
    std::string offering_id;  // the owned entry's
    double reserved_instance_hours = 0;
    double held_instance_hours = 0;     // drawn by the saved plans (the ledger)
    double planned_instance_hours = 0;  // the saved plans' demand of the same shape
    double utilisation = 0;             // held / reserved
    std::optional<double> coverage;     // held / planned; none without planned demand
    // From the imported bills of the saved plans (the service fills these): their instance-hours
    // of the shape, those billed as Committed, and Committed / reserved and Committed / all.
    double actual_instance_hours = 0;
    double actual_committed_instance_hours = 0;
    std::optional<double> actual_utilisation;
    std::optional<double> actual_coverage;
};

// Per month and owned offering: the book's reserved hours (OwnedHoursByMonth), those the saved
// plans hold (`draws`, the ledger's), and the plans' demand of the same shape (`demand`, split by
// calendar month), in month then offering order.
std::vector<OwnedMonthUse> OwnedUseByMonth(const Catalog& catalog,
                                           const std::vector<OwnedCapacity>& owned,
                                           const std::vector<OwnedDraw>& draws,
                                           const std::vector<PlannedDemand>& demand);

// "1y" or "3y" for a commitment's term hours.
const char* TermName(double term_hours);

}  // namespace gpucost::pricing::plan
