/**
 * Redis Cluster's key → hash slot mapping: CRC16 (XMODEM: polynomial 0x1021, initial value 0) of the
 * key's hash tag — the bytes between its first `{` and the next `}` when there are any — else of the
 * whole key, modulo 16384. The same function as Redis's `CLUSTER KEYSLOT`.
 */

/** The number of hash slots of a Redis Cluster. */
export const SLOT_COUNT = 16_384;

const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[byte] = crc;
  }
  return table;
})();

function crc16(bytes: Uint8Array, start: number, end: number): number {
  let crc = 0;
  for (let i = start; i < end; i++) {
    crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ (bytes[i] as number)) & 0xff] as number);
  }
  return crc;
}

/** The slot of `key` (a string is hashed as its UTF-8 bytes). */
export function keySlot(key: string | Buffer): number {
  const bytes = typeof key === "string" ? Buffer.from(key, "utf8") : key;
  const open = bytes.indexOf(0x7b); // {
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1); // }
    if (close > open + 1) return crc16(bytes, open + 1, close) % SLOT_COUNT;
  }
  return crc16(bytes, 0, bytes.length) % SLOT_COUNT;
}
