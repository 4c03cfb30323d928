declare module "vitest" {
  export interface ProvidedContext {
    receiverUrl: string;
  }
}
export {};
