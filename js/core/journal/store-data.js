// @ts-check
// Store data in a journal: text as is, bytes as base64 (a journal is JSON); a store listing with
// its files' data so.
import { isObject } from '../values.js';

export function encodeData(data) {
  if (data === undefined || data === null) return null;
  if (typeof data === 'string') return data;
  if (data instanceof Uint8Array) {
    let binary = '';
    for (let i = 0; i < data.length; i += 0x8000) binary += String.fromCharCode(...data.subarray(i, i + 0x8000));
    return { base64: btoa(binary) };
  }
  return data; // not store data: the engine reports it as it would without a journal
}

export function decodeData(data) {
  if (data === null) return undefined;
  if (isObject(data) && typeof data.base64 === 'string') {
    const binary = atob(data.base64);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }
  return data;
}

export function encodeListing(listing) {
  if (!isObject(listing) || !Array.isArray(listing.files)) return listing;
  const files = listing.files.map((f) => {
    if (!isObject(f) || f.data === undefined) return f;
    return { ...f, data: encodeData(f.data) };
  });
  return { ...listing, files };
}

export function decodeListing(listing) {
  if (!isObject(listing) || !Array.isArray(listing.files)) return listing;
  return {
    ...listing,
    files: listing.files.map((f) => (isObject(f) && f.data !== undefined ? { ...f, data: decodeData(f.data) } : f)),
  };
}
