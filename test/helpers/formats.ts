/** A timestamp as the wire carries it: ISO 8601 in UTC with milliseconds and `Z`. */
export const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
