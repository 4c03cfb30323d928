import { now } from "../../shared/clock";

export const nowIso = () => new Date(now()).toISOString();
