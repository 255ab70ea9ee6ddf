// The serving plan's totals and sizes, read in one place so that a rename in openapi.yaml fails
// the type check in this file and nowhere else.
import type { Schemas } from "./api";

type ServingPlan = Schemas["InferencePlan"];
type ServingOption = Schemas["InferencePlanOption"];

export const servingTotal = (plan: ServingPlan): number => plan.total_count;
export const servingAccelerators = (o: ServingOption): number => o.total_accelerators;
export const servingNodes = (o: ServingOption): number => o.nodes;
