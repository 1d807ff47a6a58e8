import type { ApiConfig } from "./api.js";

/** The device fields the library owns (docs/sdk-protocol.md §3). */
export interface DeviceFields {
  external_id: string | null;
  language: string | null;
  timezone: string | null;
  tags: string[];
  opted_in: boolean;
}

/**
 * What the library keeps per site in IndexedDB, where both the page and the service
 * worker read it: the configuration (so the worker can call the API on its own), the
 * registration the server confirmed, and the values the app has asked for since.
 */
export interface StoredState {
  config: ApiConfig;
  deviceId?: string;
  /** The token last registered: the client key's proof of possession. */
  pushToken?: string;
  /** Last values the server confirmed. */
  confirmed?: DeviceFields;
  /** What the app wants; differences from `confirmed` are pending changes. */
  desired: DeviceFields;
  /** When the device was last registered (ms since the epoch), for the weekly refresh. */
  registeredAt?: number;
  /** The app badge the worker keeps for badge_increment. */
  badgeCount?: number;
}

const DB = "herald";
const STORE = "state";
const KEY = "device";

function open(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function run<T>(mode: IDBTransactionMode, op: (store: IDBObjectStore) => IDBRequest): Promise<T> {
  const db = await open();
  try {
    return await new Promise<T>((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const req = op(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(req.result as T);
      tx.onerror = () => reject(tx.error);
    });
  } finally {
    db.close();
  }
}

export const loadState = () => run<StoredState | undefined>("readonly", (s) => s.get(KEY));
export const saveState = (state: StoredState) => run<void>("readwrite", (s) => s.put(state, KEY));
export const clearState = () => run<void>("readwrite", (s) => s.delete(KEY));
