// The neoclouds' own price answers, one reader each:
//   Lambda    GET /api/v1/instance-types: { "data": { NAME: { "instance_type": { "name",
//             "gpu_description", "price_cents_per_hour", "specs": { "vcpus", "memory_gib",
//             "gpus" } }, "regions_with_capacity_available": [...] } } }
//   RunPod    POST /graphql gpuTypes: { "data": { "gpuTypes": [ { "id", "displayName",
//             "secureCloud", "communityCloud", "securePrice", "communityPrice",
//             "secureSpotPrice", "communitySpotPrice" } ] } } (GraphQL "errors" refused)
//   Vast.ai   GET /api/v0/bundles/: { "offers": [ { "id", "gpu_name", "num_gpus", "geolocation",
//             "dph_total", "min_bid", "cpu_cores_effective", "cpu_ram", "rentable" } ] }, in
//             pages (sync follows them by offer id) read together
//   CoreWeave the GPU table of its pricing page (HTML): GPU Model | GPU Count | ... |
//             Instance Price ($ per hour), found by its header cells
// The answers are small (a few hundred kilobytes), so each is read whole. GPU names are mapped
// to the catalog's accelerators through mappings/neocloud-gpus.csv.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "service/import/readers.hpp"

namespace gpucost::import::detail {
namespace {

using nlohmann::json;
using pricing::ErrorCode;
using pricing::MakeError;

// Far above any neocloud answer (Vast.ai's whole marketplace is a few megabytes); a larger
// body is not the documented answer.
constexpr std::size_t kMaxAnswerBytes = std::size_t{64} << 20;
constexpr double kCentsPerDollar = 100;
// Lambda prices an instance type alike in every region it sells it in (docs.lambda.ai,
// "Pricing"), so the catalog keeps one row per type in its "us" region.
constexpr char kLambdaRegion[] = "us";
// RunPod prices a GPU type per cloud (secure, community), not per data centre.
constexpr char kRunpodRegion[] = "global";
// CoreWeave's pricing page lists one North American price per instance.
constexpr char kCoreweaveRegion[] = "north-america";

pricing::Result<std::string> ReadWhole(const Input& input, const std::string& name) {
    if (input.file == nullptr) {
        if (input.buffer.size() > kMaxAnswerBytes) {
            return MakeError(ErrorCode::kInvalidArgument, name + ": larger than 64 MiB");
        }
        return std::string(input.buffer);
    }
    std::string text;
    char chunk[1 << 16];
    std::size_t got = 0;
    while ((got = std::fread(chunk, 1, sizeof chunk, input.file)) > 0) {
        text.append(chunk, got);
        if (text.size() > kMaxAnswerBytes) {
            return MakeError(ErrorCode::kInvalidArgument, name + ": larger than 64 MiB");
        }
    }
    return text;
}

pricing::Result<json> ParseJson(const Input& input, const std::string& name) {
    auto text = ReadWhole(input, name);
    if (!text.ok()) return text.error();
    json doc = json::parse(text.value(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) {
        return MakeError(ErrorCode::kInvalidArgument,
                         name + ": not a JSON object (cut short, or not the documented answer)");
    }
    return doc;
}

const json& Member(const json& object, const char* key) {
    static const json kNull;
    if (!object.is_object()) return kNull;
    auto it = object.find(key);
    return it == object.end() ? kNull : *it;
}

std::optional<double> Number(const json& value) {
    if (!value.is_number()) return std::nullopt;
    return value.get<double>();
}

// A region name as the catalog writes it: lowercase, runs of other characters as one '-'
// ("Texas, US" -> "texas-us").
std::string Slug(const std::string& text) {
    std::string out;
    for (char c : text) {
        auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) != 0) {
            out += static_cast<char>(std::tolower(u));
        } else if (!out.empty() && out.back() != '-') {
            out += '-';
        }
    }
    while (!out.empty() && out.back() == '-') out.pop_back();
    return out;
}

// A GPU count as the answer states it: a whole number from 1 to kMaxGpusPerInstance, else 0
// (not a GPU instance, or not a count).
constexpr double kMaxGpusPerInstance = 1024;
int GpuCount(const json& value) {
    const double n = Number(value).value_or(0);
    return n >= 1 && n <= kMaxGpusPerInstance && n == static_cast<double>(static_cast<int>(n))
               ? static_cast<int>(n)
               : 0;
}

// A host size (vCPUs, GiB) when it is a non-negative finite number.
std::optional<double> Size(const json& value) {
    auto n = Number(value);
    return n && std::isfinite(*n) && *n >= 0 ? n : std::nullopt;
}

InstanceShape ShapeOf(const InstanceShape& gpu, int count) {
    InstanceShape shape = gpu;
    shape.accelerator_count = count;
    shape.vcpus.reset();
    shape.ram_gib.reset();
    return shape;
}

// Takes a price that the answer states as a number of dollars (or cents), or counts why not.
std::optional<double> Price(OfferingSink& sink, const json& value, double per_dollar,
                            const std::string& row) {
    const FileAmount amount = Usd(value);
    if (!amount.fault.empty()) {
        sink.Skip(amount.fault, row);
        return std::nullopt;
    }
    if (amount.usd <= 0) {
        sink.Skip("zero_price");
        return std::nullopt;
    }
    return amount.usd / per_dollar;
}

pricing::Result<FileResult> Finish(FileResult result, const ParseOptions& options,
                                   const std::string& source) {
    if (auto stamped = StampObservations(result, options, source + ", retrieved " + options.as_of);
        !stamped.ok()) {
        return stamped.error();
    }
    return result;
}

}  // namespace

pricing::Assumptions LambdaAssumptions() {
    return {{"cents_per_dollar", kCentsPerDollar, "cents",
             "price_cents_per_hour / 100; one price per instance type for every Lambda region, "
             "kept as the catalog's 'us' region",
             "Lambda Cloud API instance-types reference; Lambda pricing (same in every region)"}};
}

pricing::Result<FileResult> ReadLambda(const Input& input, const std::string& name,
                                       const Mappings& mappings, const ParseOptions& options) {
    auto doc = ParseJson(input, name);
    if (!doc.ok()) return doc.error();
    const json& data = Member(doc.value(), "data");
    if (!data.is_object()) {
        return MakeError(ErrorCode::kInvalidArgument,
                         name + ": not a Lambda instance-types answer (needs a data object)");
    }
    FileResult result;
    result.file = name;
    OfferingSink sink(result);
    for (const auto& [key, entry] : data.items()) {
        ++result.records_read;
        const json& type = Member(entry, "instance_type");
        const json& specs = Member(type, "specs");
        const int gpus = GpuCount(Member(specs, "gpus"));
        if (gpus < 1) {
            sink.Skip("no_gpu");
            continue;
        }
        const InstanceShape* gpu = mappings.NeocloudGpu("lambda", Text(type, "gpu_description"));
        if (gpu == nullptr) {
            sink.Skip("gpu_not_mapped");
            continue;
        }
        auto usd = Price(sink, Member(type, "price_cents_per_hour"), kCentsPerDollar, key);
        if (!usd) continue;
        InstanceShape shape = ShapeOf(*gpu, gpus);
        shape.vcpus = Size(Member(specs, "vcpus"));
        shape.ram_gib = Size(Member(specs, "memory_gib"));
        sink.Add(MakeOffering("lambda", Text(type, "name").empty() ? key : Text(type, "name"),
                              kLambdaRegion, pricing::PriceType::kOnDemand, shape, *usd,
                              "price_cents_per_hour " + Num(*usd * kCentsPerDollar)));
    }
    return Finish(std::move(result), options,
                  "Lambda Cloud API (cloud.lambdalabs.com/api/v1/instance-types)");
}

pricing::Assumptions RunpodAssumptions() {
    return {{"runpod_gpus_per_offering", 1, "GPU",
             "RunPod prices one GPU of a type per cloud (secure, community): one offering each, "
             "region 'global'",
             "RunPod GraphQL API gpuTypes (securePrice, communityPrice, *SpotPrice)"}};
}

pricing::Result<FileResult> ReadRunpod(const Input& input, const std::string& name,
                                       const Mappings& mappings, const ParseOptions& options) {
    auto doc = ParseJson(input, name);
    if (!doc.ok()) return doc.error();
    if (doc.value().contains("errors")) {
        return MakeError(ErrorCode::kInvalidArgument,
                         name + ": RunPod answered GraphQL errors (the schema changed?)");
    }
    const json& types = Member(Member(doc.value(), "data"), "gpuTypes");
    if (!types.is_array()) {
        return MakeError(ErrorCode::kInvalidArgument,
                         name + ": not a RunPod gpuTypes answer (needs data.gpuTypes)");
    }
    FileResult result;
    result.file = name;
    OfferingSink sink(result);
    for (const json& type : types) {
        ++result.records_read;
        const InstanceShape* gpu = mappings.NeocloudGpu("runpod", Text(type, "id"));
        if (gpu == nullptr) {
            sink.Skip("gpu_not_mapped");
            continue;
        }
        for (const std::string cloud : {"secure", "community"}) {
            if (Member(type, (cloud + "Cloud").c_str()) != true) {
                sink.Skip("cloud_not_offered");
                continue;
            }
            const std::string instance = Text(type, "displayName") + " " + cloud;
            const auto add = [&](const std::string& member, pricing::PriceType price_type) {
                const json& value = Member(type, member.c_str());
                if (value.is_null()) return;
                if (auto usd = Price(sink, value, 1, Text(type, "id") + " " + member)) {
                    sink.Add(MakeOffering("runpod", instance, kRunpodRegion, price_type,
                                          ShapeOf(*gpu, 1), *usd, member));
                }
            };
            add(cloud + "Price", pricing::PriceType::kOnDemand);
            add(cloud + "SpotPrice", pricing::PriceType::kSpot);
        }
    }
    return Finish(std::move(result), options,
                  "RunPod GraphQL API (api.runpod.io/graphql gpuTypes)");
}

namespace {

// One offer of the bundles search: skipped with a reason, or kept in `cheapest` when it is the
// cheapest yet of its offering id (on-demand dph_total, spot min_bid).
void KeepCheapestVastaiOffer(const json& offer, const Mappings& mappings, OfferingSink& sink,
                             std::map<std::string, std::pair<pricing::Offering, int>>& cheapest) {
    if (Member(offer, "rentable") == false) {
        sink.Skip("not_rentable");
        return;
    }
    const std::string gpu_name = Text(offer, "gpu_name");
    const InstanceShape* gpu = mappings.NeocloudGpu("vastai", gpu_name);
    const int count = GpuCount(Member(offer, "num_gpus"));
    const std::string region = Slug(Text(offer, "geolocation"));
    if (gpu == nullptr || count < 1) {
        sink.Skip("gpu_not_mapped");
        return;
    }
    if (region.empty()) {
        sink.Skip("no_region");
        return;
    }
    std::string type = std::to_string(count) + "x-" + gpu_name;
    std::replace(type.begin(), type.end(), ' ', '_');
    const std::string row = "offer " + Num(Number(Member(offer, "id")).value_or(0));
    for (auto [member, price_type] : {std::pair{"dph_total", pricing::PriceType::kOnDemand},
                                      std::pair{"min_bid", pricing::PriceType::kSpot}}) {
        const json& value = Member(offer, member);
        if (value.is_null()) continue;
        auto usd = Price(sink, value, 1, row + " " + member);
        if (!usd) continue;
        pricing::Offering o =
            MakeOffering("vastai", type, region, price_type, ShapeOf(*gpu, count), *usd, member);
        auto [it, fresh] = cheapest.try_emplace(o.id, o, 0);
        ++it->second.second;
        if (!fresh && o.price.usd_per_hour < it->second.first.price.usd_per_hour) {
            it->second.first = std::move(o);
        }
    }
}

}  // namespace

pricing::Assumptions VastaiAssumptions() {
    return {{"vastai_offer_kept", 1, "offer",
             "a marketplace: per GPU, count and location the cheapest rentable offer's dph_total "
             "(on-demand) and min_bid (interruptible, spot)",
             "Vast.ai bundles search (console.vast.ai/api/v0/bundles)"}};
}

pricing::Result<FileResult> ReadVastai(const std::vector<NamedInput>& pages,
                                       const Mappings& mappings, const ParseOptions& options) {
    FileResult result;
    OfferingSink sink(result);
    // The cheapest offer per offering id over every page, and how many offers it was chosen from.
    std::map<std::string, std::pair<pricing::Offering, int>> cheapest;
    for (const auto& [input, name] : pages) {
        result.file += (result.file.empty() ? "" : ", ") + name;
        auto doc = ParseJson(input, name);
        if (!doc.ok()) return doc.error();
        const json& offers = Member(doc.value(), "offers");
        if (!offers.is_array()) {
            return MakeError(ErrorCode::kInvalidArgument,
                             name + ": not a Vast.ai bundles answer (needs an offers array)");
        }
        for (const json& offer : offers) {
            ++result.records_read;
            KeepCheapestVastaiOffer(offer, mappings, sink, cheapest);
        }
    }
    for (auto& [id, kept] : cheapest) {
        kept.first.price.notes = "cheapest " + kept.first.price.notes + " of " +
                                 std::to_string(kept.second) + " offer(s)";
        sink.Add(std::move(kept.first));
    }
    return Finish(std::move(result), options,
                  "Vast.ai bundles search (console.vast.ai/api/v0/bundles)");
}

namespace {

// The text of an HTML fragment: tags dropped, the common entities decoded, whitespace runs
// as one space, trimmed.
std::string CellText(std::string_view html) {
    std::string out;
    bool in_tag = false;
    for (char c : html) {
        if (c == '<') in_tag = true;
        if (!in_tag) out += std::isspace(static_cast<unsigned char>(c)) != 0 ? ' ' : c;
        if (c == '>') in_tag = false;
    }
    for (auto [entity, text] :
         {std::pair{"&amp;", "&"}, std::pair{"&nbsp;", " "}, std::pair{"&#36;", "$"}}) {
        for (auto at = out.find(entity); at != std::string::npos; at = out.find(entity)) {
            out.replace(at, std::string_view(entity).size(), text);
        }
    }
    std::string collapsed;
    for (char c : out) {
        if (c == ' ' && (collapsed.empty() || collapsed.back() == ' ')) continue;
        collapsed += c;
    }
    while (!collapsed.empty() && collapsed.back() == ' ') collapsed.pop_back();
    return collapsed;
}

std::string Lower(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

// The rows of every <table> in `html`, each a list of cell texts (<th> and <td> alike).
std::vector<std::vector<std::string>> TableRows(const std::string& html) {
    const std::string lower = Lower(html);
    std::vector<std::vector<std::string>> rows;
    for (auto tr = lower.find("<tr"); tr != std::string::npos; tr = lower.find("<tr", tr + 3)) {
        const auto end = std::min(lower.find("</tr", tr), lower.find("<tr", tr + 3));
        std::vector<std::string> cells;
        for (auto cell = lower.find("<t", tr + 3); cell < end; cell = lower.find("<t", cell + 2)) {
            if (lower.compare(cell, 3, "<td") != 0 && lower.compare(cell, 3, "<th") != 0) continue;
            const auto open = lower.find('>', cell);
            const auto close = lower.find("</t", open);
            if (open == std::string::npos || close == std::string::npos) break;
            cells.push_back(CellText(std::string_view(html).substr(open + 1, close - open - 1)));
        }
        rows.push_back(std::move(cells));
        if (end == std::string::npos) break;
    }
    return rows;
}

std::optional<std::size_t> Column(const std::vector<std::string>& header, std::string_view name) {
    for (std::size_t i = 0; i < header.size(); ++i) {
        if (Lower(header[i]).find(name) != std::string::npos) return i;
    }
    return std::nullopt;
}

}  // namespace

pricing::Assumptions CoreweaveAssumptions() {
    return {{"coreweave_instance_price", 1, "instance",
             "the GPU table's Instance Price is the whole instance per hour (GPUs, vCPU, RAM and "
             "local storage); region 'north-america'",
             "CoreWeave pricing page, GPU table (coreweave.com/pricing)"}};
}

pricing::Result<FileResult> ReadCoreweave(const Input& input, const std::string& name,
                                          const Mappings& mappings, const ParseOptions& options) {
    auto html = ReadWhole(input, name);
    if (!html.ok()) return html.error();
    if (Lower(html.value()).find("</html>") == std::string::npos) {
        return MakeError(ErrorCode::kInvalidArgument,
                         name + ": not a whole HTML page (no </html>: cut short?)");
    }
    const auto rows = TableRows(html.value());
    std::optional<std::size_t> model;
    std::optional<std::size_t> count;
    std::optional<std::size_t> price;
    std::size_t first = 0;
    for (; first < rows.size() && !(model && count && price); ++first) {
        model = Column(rows[first], "gpu model");
        count = Column(rows[first], "gpu count");
        price = Column(rows[first], "instance price");
    }
    if (!model || !count || !price) {
        return MakeError(ErrorCode::kInvalidArgument,
                         name +
                             ": no GPU table with GPU Model, GPU Count and Instance Price "
                             "columns (the pricing page changed?)");
    }
    FileResult result;
    result.file = name;
    OfferingSink sink(result);
    for (std::size_t r = first; r < rows.size(); ++r) {
        const auto& cells = rows[r];
        if (cells.size() <= std::max({*model, *count, *price})) continue;  // a section heading
        ++result.records_read;
        const InstanceShape* gpu = mappings.NeocloudGpu("coreweave", cells[*model]);
        std::string gpus = cells[*count];
        if (gpu == nullptr || gpus.empty() || gpus.size() > 4 ||
            !std::all_of(gpus.begin(), gpus.end(),
                         [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
            sink.Skip("gpu_not_mapped");
            continue;
        }
        std::string amount = cells[*price];
        amount.erase(std::remove_if(amount.begin(), amount.end(),
                                    [](char c) { return c == '$' || c == ','; }),
                     amount.end());
        auto usd = Price(sink, json(amount), 1, cells[*model]);
        if (!usd) continue;
        const int n = std::stoi(gpus.substr(0, 6));
        sink.Add(MakeOffering("coreweave", cells[*model] + " (" + std::to_string(n) + "x)",
                              kCoreweaveRegion, pricing::PriceType::kOnDemand, ShapeOf(*gpu, n),
                              *usd, "Instance Price " + cells[*price]));
    }
    return Finish(std::move(result), options, "CoreWeave pricing page (coreweave.com/pricing)");
}

}  // namespace gpucost::import::detail
