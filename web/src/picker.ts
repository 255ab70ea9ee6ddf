// An offering picker for the planners that take an offering id: a search box over the catalog's
// offerings of the price types the planner takes (GET /v1/offerings, every page), matching every
// word typed against accelerator, provider, instance type, region and price type; the first
// matches are listed as buttons, and picking one fills the id box the form sends.
import { api, type OfferingQuery, type Schemas } from "./api";
import { h, priceTypeName, providerName, usd } from "./dom";

type Offering = Schemas["Offering"];
type PriceType = NonNullable<OfferingQuery["price_type"]>[number];

const kShown = 8;

export const offeringLabel = (o: Offering): string =>
    `${o.accelerator_count} × ${o.accelerator} · ${o.provider_name ?? providerName(o.provider)} ${o.instance_type} · ` +
    `${o.region} · ${priceTypeName(o.price_type)} · ${usd(o.usd_per_hour, 2)}/h`;

async function loadOfferings(priceTypes: PriceType[]): Promise<Offering[]> {
    const out: Offering[] = [];
    for (const price_type of priceTypes) {
        let cursor: string | undefined;
        do {
            const { data } = await api.GET("/v1/offerings", { params: { query: { price_type: [price_type], limit: 500, cursor,
                                                                                  sort: "usd_per_accelerator_hour" } } });
            if (!data) break;
            out.push(...data.items);
            cursor = data.next_cursor ?? undefined;
        } while (cursor);
    }
    return out;
}

export function offeringPicker(target: HTMLInputElement, priceTypes: PriceType[], testid: string,
                               keep: (o: Offering) => boolean = () => true): HTMLElement {
    const search = h("input", { type: "search", autocomplete: "off", id: `${testid}-search`, placeholder: "e.g. h100 aws, a100 spot, tpu gcp",
                                "data-testid": `${testid}-search` });
    const list = h("ul", { class: "picker-list", "data-testid": `${testid}-list`, "aria-label": "Matching offerings" });
    const status = h("p", { class: "status", role: "status", "aria-live": "polite" });
    let offerings: Offering[] | null = null;
    const draw = () => {
        if (!offerings) return;
        const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
        const matches = offerings.filter((o) => {
            const text = `${o.id} ${offeringLabel(o)} ${o.provider} ${o.price_type}`.toLowerCase();
            return words.every((w) => text.includes(w));
        });
        list.replaceChildren(...matches.slice(0, kShown).map((o) => {
            const b = h("button", { type: "button", class: "pick", "data-id": o.id }, offeringLabel(o));
            b.onclick = () => {
                target.value = o.id;
                target.dispatchEvent(new Event("change"));
                list.replaceChildren();
                status.textContent = `Chosen: ${offeringLabel(o)}`;
                target.focus();
            };
            return h("li", {}, b);
        }));
        status.textContent = `${matches.length} of ${offerings.length} offerings match` +
            (matches.length > kShown ? `; the ${kShown} cheapest per accelerator-hour shown, type more to narrow` : "");
    };
    // The catalog is read once, when the picker is first used.
    const ensure = async () => {
        if (offerings) return;
        status.textContent = "Loading offerings…";
        offerings = (await loadOfferings(priceTypes)).filter(keep);
        draw();
    };
    search.addEventListener("focus", () => void ensure());
    search.addEventListener("input", () => void ensure().then(draw));
    return h("div", { class: "picker field", "data-testid": testid },
             h("label", { for: search.id }, "Find an offering (", priceTypes.map(priceTypeName).join(", "), ")"), search, status, list);
}
