import { HeraldSdk } from "./herald.js";

export { HeraldError } from "./api.js";
export type { HeraldEventName, HeraldEvents } from "./events.js";
export { type HeraldConfig, HeraldSdk } from "./herald.js";
export type { InAppActions, InAppEventType, InAppMessage, InAppRenderer } from "./in-app.js";

/** The page's Herald: `await Herald.init({ baseUrl, appId, clientKey }); await Herald.subscribe();` */
export const Herald = new HeraldSdk();
