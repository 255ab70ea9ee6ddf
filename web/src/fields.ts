// The answer fields whose names the API is still settling (serving plan totals and sizes). Each is
// read here only, so a rename in openapi.yaml fails the type check in this file and nowhere else.
import type { Schemas } from "./api";

type ServingPlan = Schemas["InferencePlan"];
type ServingOption = Schemas["InferencePlanOption"];

export const servingTotal = (plan: ServingPlan): number => plan.total_options;
export const servingAccelerators = (o: ServingOption): number => o.accelerators;
export const servingNodes = (o: ServingOption): number => o.instances;
