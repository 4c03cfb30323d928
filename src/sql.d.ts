/** SQL migrations are bundled as text (wrangler.toml [[rules]] type = "Text"). */
declare module "*.sql" {
  const text: string;
  export default text;
}

/** Browser bundles served as static text (wrangler.toml [[rules]]). */
declare module "*.umd.min.js" {
  const text: string;
  export default text;
}
