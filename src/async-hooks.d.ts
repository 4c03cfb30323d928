/** workerd's AsyncLocalStorage (nodejs_compat), the part the object meter uses (src/objects/meter.ts). */
declare module "node:async_hooks" {
  export class AsyncLocalStorage<T> {
    run<R>(store: T, fn: () => R): R;
    getStore(): T | undefined;
  }
}
