"""The console's and spot pages' budgets, measured in headless Chromium (not in tests).

    console.py BASE_URL TOKEN PHOTO_FILE PHOTOS

Loads PHOTOS copies of PHOTO_FILE (each with distinct bytes, so each is its own photo with
its own thumbnails) into users/bench/folder/ and four into spot spots/bench-spot, then:
(a) sums the decoded bytes of the console's own JavaScript and CSS; (b) opens the folder in
the console and counts the requests: thumbnails against the tiles on screen, and everything
else; (c) opens the spot's page through a share link and counts its requests. Prints the
table and the targets; exits 1 when one is missed.
"""
import concurrent.futures
import json
import sys
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

BASE, TOKEN, PHOTO, COUNT = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
photo = open(PHOTO, "rb").read()


def put(name, index):
    body = photo + f"bench-{index}".encode()   # after the end of the image: new bytes, same picture
    request = urllib.request.Request(f"{BASE}/v0/b/{name}", data=body, method="PUT",
                                     headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "image/jpeg"})
    with urllib.request.urlopen(request) as response:
        response.read()


with concurrent.futures.ThreadPoolExecutor(8) as pool:
    list(pool.map(lambda i: put(f"users/o/bench%2Ffolder%2Fphoto-{i:05d}.jpg", i), range(COUNT)))
for i in range(4):
    put(f"spots/o/bench-spot%2F{i}.jpg", COUNT + i)
request = urllib.request.Request(f"{BASE}/v0/b/spots/spots/bench-spot/shares", data=b"{}", method="POST",
                                 headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
share_url = json.load(urllib.request.urlopen(request))["url"]

options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
wait = WebDriverWait(driver, 60)
resources = "return performance.getEntriesByType('resource').map(e => [e.name, e.decodedBodySize])"

# (a) and (b): sign in, then open the folder in a fresh document and let it settle.
driver.get(BASE + "/console/")
wait.until(lambda d: d.find_elements(By.ID, "token"))[0].send_keys(TOKEN)
driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
wait.until(lambda d: d.find_element(By.ID, "who-name").text == "bench")
driver.get(BASE + "/console/#/browse/users/bench/folder/")
driver.refresh()
wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".grid img")) > 0)
visible = driver.execute_script("""
    return [...document.querySelectorAll('.grid img')].filter(i => { const r = i.getBoundingClientRect();
      return r.bottom > 0 && r.top < innerHeight; }).length""")
wait.until(lambda d: d.execute_script("""
    return [...document.querySelectorAll('.grid img')].filter(i => { const r = i.getBoundingClientRect();
      return r.bottom > 0 && r.top < innerHeight; }).every(i => i.complete && i.naturalWidth > 0)"""))
tiles = len(driver.find_elements(By.CSS_SELECTOR, ".grid img"))
entries = driver.execute_script(resources)
# The bytes each of the console's own scripts and style sheets the page loaded has, as served.
own_assets = sorted({name for name, _ in entries if "/console/" in name and "/vendor/" not in name and name.split("?")[0].endswith((".js", ".css"))})
own = sum(len(urllib.request.urlopen(name).read()) for name in own_assets)
thumbnails = [name for name, _ in entries if "alt=thumbnail" in name]
others = [name for name, _ in entries if "alt=thumbnail" not in name]

# (c): the spot page, signed out, through its share link.
stranger_options = webdriver.ChromeOptions()
stranger_options.binary_location = "/usr/bin/chromium"
for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
    stranger_options.add_argument(argument)
stranger = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=stranger_options)
stranger.get(share_url)
WebDriverWait(stranger, 60).until(lambda d: d.execute_script(
    "return [...document.images].length === 4 && [...document.images].every(i => i.complete && i.naturalWidth > 0)"))
page_entries = stranger.execute_script(resources)
page_images = [name for name, _ in page_entries if "/photo/" in name]
page_other = [name for name, _ in page_entries if "/photo/" not in name]
driver.quit()
stranger.quit()

print(f"photos in the folder                         {COUNT}")
print(f"console's own JavaScript and CSS (decoded)   {own / 1024:.1f} KB    target < 150 KB ({len(own_assets)} files)")
print(f"folder: tiles in the first page               {tiles}")
print(f"folder: tiles on screen                       {visible}")
print(f"folder: thumbnails fetched                    {len(thumbnails)}    (on screen, and those within the browser's lazy-loading distance)")
print(f"folder: other requests                        {len(others)}    target <= 12: " + " ".join(sorted({n.split('?')[0].rsplit('/', 1)[-1] or n for n in others})))
print(f"spot page: 1 HTML + {len(page_other)} style/icon + {len(page_images)} images    target: 1 HTML, its style sheet and icon, and its images")
missed = []
if own >= 150 * 1024: missed.append("own JavaScript and CSS")
if len(others) > 12: missed.append("the folder's other requests")
if len(thumbnails) >= tiles and COUNT > 100: missed.append("thumbnails: every tile's was fetched")
if len(page_other) > 2 or len(page_images) != 4: missed.append("the spot page's requests")
print("RESULT: " + ("PASS" if not missed else "FAIL (" + ", ".join(missed) + ")"))
sys.exit(1 if missed else 0)
