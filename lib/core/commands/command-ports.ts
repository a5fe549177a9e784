// The messaging issue defines the command repository (insert, update, query, poll reads).
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface CommandRepository {}
