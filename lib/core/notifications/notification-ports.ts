// The messaging issue defines the notification repository (insert, query, poll reads).
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface NotificationRepository {}
