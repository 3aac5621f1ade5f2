// Reads WARC files with warcio.js, an implementation independent of
// sonda's, and prints one JSON line per record: where warcio found it, its
// type, target URI and ID, and whether its block and payload digests match
// what warcio parsed. Used by TestWarcioReadsOurFiles.
//
// usage: node warcio_check.cjs WARCIO_DIR FILE...
// where WARCIO_DIR holds node_modules/warcio (npm install warcio@2.4.11).
"use strict";

const { createRequire } = require("node:module");
const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

const [warcioDir, ...files] = process.argv.slice(2);
const { WARCParser } = createRequire(path.join(path.resolve(warcioDir), "package.json"))("warcio");

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

// sha1Base32 renders a SHA-1 the way WARC writers label it: "sha1:" and
// RFC 4648 base32 (160 bits are exactly 32 characters, no padding).
function sha1Base32(bytes) {
  const sum = crypto.createHash("sha1").update(bytes).digest();
  let bits = 0;
  let value = 0;
  let out = "";
  for (const b of sum) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return "sha1:" + out;
}

function verdict(field, bytes) {
  if (!field) return "absent";
  return field.toUpperCase() === sha1Base32(bytes).toUpperCase() ? "ok" : "mismatch " + sha1Base32(bytes);
}

async function main() {
  for (const file of files) {
    // Pass 1: blocks as stored, without HTTP parsing.
    const blocks = [];
    const raw = new WARCParser(fs.createReadStream(file), { parseHttp: false });
    for await (const record of raw) {
      const block = await record.readFully(false);
      blocks.push({
        offset: raw.offset,
        length: block.length,
        declared: Number(record.warcHeader("Content-Length")),
        block: verdict(record.warcHeader("WARC-Block-Digest"), block),
      });
    }
    // Pass 2: HTTP messages parsed by warcio, payload taken raw (still
    // content-encoded, as WARC-Payload-Digest is defined).
    const parser = new WARCParser(fs.createReadStream(file));
    let i = 0;
    for await (const record of parser) {
      const payload = await record.readFully(false);
      const out = {
        file: path.basename(file),
        ...blocks[i++],
        type: record.warcType,
        uri: record.warcTargetURI || "",
        id: record.warcHeader("WARC-Record-ID"),
        date: record.warcDate,
        payload: verdict(record.warcPayloadDigest, payload),
        status: record.httpHeaders ? Number(record.httpHeaders.statusCode || 0) : 0,
      };
      process.stdout.write(JSON.stringify(out) + "\n");
    }
    if (i !== blocks.length) {
      throw new Error(`${file}: ${blocks.length} records without HTTP parsing, ${i} with it`);
    }
  }
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err) + "\n");
  process.exit(1);
});
