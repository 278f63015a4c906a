/** A page loaded on first use (its own chunk), with a progress bar meanwhile and an error if the chunk fails. */
import type { ComponentType, FunctionComponent } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError } from "../api";
import { ErrorBox } from "./widgets";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function lazy<P extends Record<string, any> = any>(load: () => Promise<Record<string, unknown>>, name: string): FunctionComponent<P> {
  let loaded: ComponentType<P> | undefined;
  return function Lazy(props: P) {
    const [C, setC] = useState<ComponentType<P> | undefined>(() => loaded);
    const [error, setError] = useState<ApiError>();
    useEffect(() => {
      if (C) return;
      load().then(
        (m) => {
          loaded = m[name] as ComponentType<P>;
          setC(() => loaded);
        },
        () => setError(new ApiError(0, "chunk_failed", "This page could not be loaded. Reload the page to try again.")),
      );
    }, []);
    if (error) return <ErrorBox error={error} />;
    if (!C) return <div class="loading-bar" role="progressbar" aria-label="Loading the page" />;
    return <C {...props} />;
  };
}
