/** The one line a person sees when the server is up: where it answers (if it serves the API) and how to stop it. */
export function readyLine(apiUrl: string | null): string {
  return apiUrl ? `ito-server: ready at ${apiUrl}; Ctrl-C stops it` : 'ito-server: ready (no API in this process); Ctrl-C stops it';
}
