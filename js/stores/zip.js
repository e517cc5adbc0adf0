// @ts-check
// A tiny zip writer for downloading a store's files: entries are stored (method 0, no
// compression), which every unzip tool reads and which needs no deflate code in the package.
// Limits: fewer than 65,535 entries and under 4 GiB in all (no Zip64); names are UTF-8 (flag 11).

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (the zip and gzip polynomial) of `bytes`. */
export function crc32(bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** MS-DOS time and date fields for `date` (zip's timestamp format, 2-second resolution, 1980+). */
function dosTime(date) {
  const year = Math.max(1980, date.getFullYear());
  return {
    time: (date.getHours() << 11) | (date.getMinutes() << 5) | (date.getSeconds() >> 1),
    date: ((year - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate(),
  };
}

/**
 * @param {{ path: string, data: Uint8Array }[]} entries in the order they should appear
 * @param {{ date?: Date }} [options] the timestamp every entry gets; default now
 * @returns {Uint8Array} the zip file
 */
export function storedZip(entries, { date = new Date() } = {}) {
  if (entries.length >= 0xffff) {
    throw new RangeError(`zip: ${entries.length} files are more than this writer supports (65,534)`);
  }
  const encoder = new TextEncoder();
  const { time, date: day } = dosTime(date);
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const { path, data } of entries) {
    const name = encoder.encode(path);
    const crc = crc32(data);
    // Fields shared by the local header and the central directory record, from "version needed" on.
    const common = (view, at) => {
      view.setUint16(at, 20, true); // version needed: 2.0
      view.setUint16(at + 2, 0x0800, true); // flag 11: the name is UTF-8
      view.setUint16(at + 4, 0, true); // method: stored
      view.setUint16(at + 6, time, true);
      view.setUint16(at + 8, day, true);
      view.setUint32(at + 10, crc, true);
      view.setUint32(at + 14, data.length, true); // compressed size
      view.setUint32(at + 18, data.length, true); // uncompressed size
      view.setUint16(at + 22, name.length, true);
      view.setUint16(at + 24, 0, true); // extra field length
    };
    const local = new Uint8Array(30 + name.length);
    const lv = new DataView(local.buffer);
    lv.setUint32(0, 0x04034b50, true);
    common(lv, 4);
    local.set(name, 30);
    const central = new Uint8Array(46 + name.length);
    const cv = new DataView(central.buffer);
    cv.setUint32(0, 0x02014b50, true);
    cv.setUint16(4, 20, true); // version made by
    common(cv, 6);
    // comment length, disk number, internal and external attributes: zero
    cv.setUint32(42, offset, true);
    central.set(name, 46);
    locals.push(local, data);
    centrals.push(central);
    offset += local.length + data.length;
    if (offset > 0xffffffff) {
      throw new RangeError('zip: the files add up to more than 4 GiB, more than this writer supports');
    }
  }
  const centralSize = centrals.reduce((n, c) => n + c.length, 0);
  const end = new Uint8Array(22);
  const ev = new DataView(end.buffer);
  ev.setUint32(0, 0x06054b50, true);
  ev.setUint16(8, entries.length, true);
  ev.setUint16(10, entries.length, true);
  ev.setUint32(12, centralSize, true);
  ev.setUint32(16, offset, true);
  const out = new Uint8Array(offset + centralSize + end.length);
  let at = 0;
  for (const part of [...locals, ...centrals, end]) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
