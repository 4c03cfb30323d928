/** The providers live in src/shared so the tenant object's relay sends with the same code (job emails). */
export * from "../../shared/messaging/providers";
