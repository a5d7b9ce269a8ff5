/** The `workerd` package (Cloudflare's Workers runtime): its default export is the binary's path. */
declare module "workerd" {
  const path: string;
  export default path;
  export const version: string;
  export const compatibilityDate: string;
}
