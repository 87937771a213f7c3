/** The part of pip's stderr that explains a failure. */
export function pipError(stderr: string): string;
