/** Vite's `?raw` imports (a file's text, bundled into the test; workerd cannot read the file system). */
declare module "*?raw" {
  const text: string;
  export default text;
}
