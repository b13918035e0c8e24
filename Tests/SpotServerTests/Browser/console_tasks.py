"""People's tasks in the SpotStore console and on a spot page, in headless Chromium.

    console_tasks.py BASE_URL ADMIN_TOKEN ALICE_TOKEN LOGIN_LINK FIXTURES SCREENSHOTS

Alice signs in with her token, uploads photos (one with a hostile name) and a text file the
spot's rules refuse, opens a photo's details, makes a share link that a fresh browser opens
without signing in, and deletes a photo; an admin creates and revokes a user; a fresh
browser signs in with a one-time link. The admin also sets carol's claims, tries the rules playground and counts the store's
statistics. Every page is checked with axe-core (no serious or
critical violation) and the browsers' consoles must stay free of errors. Prints one JSON
line; exits 1 with the reason on the first failure.
"""
import json
import os
import shutil
import sys
import tempfile

from axe_selenium_python import Axe
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

BASE, ADMIN_TOKEN, ALICE_TOKEN, LOGIN_LINK, FIXTURES, SCREENSHOTS = sys.argv[1:7]
# Generous: a debug build on two cores makes each photo's thumbnails in a second or more.
WAIT = 60
drivers = []
checked_pages = []


class TaskFailed(Exception):
    pass


def browser():
    """A new headless Chromium with a profile of its own (no cookies)."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900", "--lang=en-US"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    drivers.append(driver)
    return driver


def wait(driver, condition, what):
    try:
        # A view the console replaced meanwhile leaves stale elements: look again.
        ignored = (NoSuchElementException, StaleElementReferenceException)
        return WebDriverWait(driver, WAIT, ignored_exceptions=ignored).until(lambda d: condition(d))
    except Exception as error:
        raise TaskFailed(f"{what}: not within {WAIT} s ({type(error).__name__}) at {driver.current_url}") from None


def check_page(driver, name):
    """No serious or critical axe-core violation; a screenshot for the docs."""
    axe = Axe(driver)
    axe.inject()
    violations = [v for v in axe.run()["violations"] if v["impact"] in ("serious", "critical")]
    if violations:
        raise TaskFailed(f"{name}: accessibility: " + "; ".join(f"{v['id']} ({v['impact']}): {v['help']}" for v in violations))
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(os.path.join(SCREENSHOTS, f"{name}.png"))
    checked_pages.append(name)


def no_alert(driver, what):
    try:
        text = driver.switch_to.alert.text
        raise TaskFailed(f"{what}: a script ran and raised an alert: {text}")
    except NoAlertPresentException:
        pass


def sign_in_with_token(driver, token, uid):
    driver.get(BASE + "/")
    field = wait(driver, lambda d: d.find_element(By.ID, "token"), "the sign-in form")
    check_page(driver, "sign-in")
    field.send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    wait(driver, lambda d: d.find_element(By.ID, "who-name").text == uid, f"signed in as {uid}")


def loaded_images(driver, selector):
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].filter(i => i.complete && i.naturalWidth > 0).length", selector)


def run():
    work = tempfile.mkdtemp()
    hostile = os.path.join(work, "<img src=x onerror=alert(1)>.jpg")
    shutil.copy(os.path.join(FIXTURES, "geotagged/sydney.jpg"), hostile)
    notes = os.path.join(work, "notes.txt")
    with open(notes, "w") as file:
        file.write("not a photo")
    uploads = [os.path.join(FIXTURES, "geotagged/paris.jpg"), os.path.join(FIXTURES, "geotagged/rio.jpg"), hostile, notes]

    alice = browser()
    sign_in_with_token(alice, ALICE_TOKEN, "alice")

    # Upload into spot "trip": three photos are stored, the text file is refused beside its name.
    alice.get(BASE + "/console/#/browse/spots/trip/")
    wait(alice, lambda d: "trip" in d.find_element(By.CSS_SELECTOR, "main nav.breadcrumb").text, "the folder trip")
    picker = wait(alice, lambda d: d.find_element(By.CSS_SELECTOR, "input[type=file]:not([webkitdirectory])"), "the file picker")
    picker.send_keys("\n".join(uploads))
    outcomes = wait(alice, lambda d: [o.text for o in d.find_elements(By.CSS_SELECTOR, ".uploads .outcome")]
                    if len(d.find_elements(By.CSS_SELECTOR, ".uploads .outcome.ok, .uploads .outcome.refused")) == 4 else None,
                    "four uploads to finish")
    if sorted(outcomes).count("stored") != 3:
        raise TaskFailed(f"uploads: {outcomes}")
    refused = alice.find_element(By.CSS_SELECTOR, ".uploads .outcome.refused").text
    if "text/plain" not in refused and "type" not in refused:
        raise TaskFailed(f"the refusal does not say why in the server's words: {refused}")
    wait(alice, lambda d: loaded_images(d, ".grid img") == 3, "three thumbnails in the grid")
    no_alert(alice, "a hostile file name")
    if alice.find_elements(By.CSS_SELECTOR, "img[src=x]"):
        raise TaskFailed("a file name became markup")
    if "<img src=x onerror=alert(1)>.jpg" not in alice.page_source.replace("&lt;", "<").replace("&gt;", ">"):
        raise TaskFailed("the hostile name is not shown as text")
    check_page(alice, "files")

    # Details: the photo's city.
    alice.find_element(By.XPATH, "//a[.//span[text()='paris.jpg']]").click()
    wait(alice, lambda d: "Paris" in d.find_element(By.CSS_SELECTOR, "dl.facts").text, "the city in the details")
    wait(alice, lambda d: loaded_images(d, "img.preview") == 1, "the preview")
    check_page(alice, "details")

    # A share link, opened by someone who is not signed in.
    alice.get(BASE + "/console/#/spot/spots/trip")
    wait(alice, lambda d: d.find_element(By.XPATH, "//button[text()='Make a share link']"), "the share form").click()
    link = wait(alice, lambda d: d.find_element(By.CSS_SELECTOR, "output.link a").get_attribute("href"), "the share link")
    check_page(alice, "spot")
    stranger = browser()
    stranger.get(link)
    wait(stranger, lambda d: loaded_images(d, ".photos img") == 3, "the shared page's photos")
    if stranger.find_element(By.TAG_NAME, "h1").text != "trip":
        raise TaskFailed("the shared page's title")
    check_page(stranger, "share-page")

    # Delete a photo, confirming.
    alice.get(BASE + "/console/#/object/spots/trip/rio.jpg")
    wait(alice, lambda d: d.find_element(By.XPATH, "//button[text()='Delete']"), "the delete button").click()
    wait(alice, lambda d: d.switch_to.alert, "the confirmation").accept()
    wait(alice, lambda d: "#/browse/spots/trip/" in d.current_url and loaded_images(d, ".grid img") == 2, "the grid without rio.jpg")

    # Sign out; an admin creates and revokes a user.
    alice.find_element(By.ID, "sign-out").click()
    wait(alice, lambda d: d.find_element(By.ID, "token"), "the sign-in form after signing out")
    sign_in_with_token(alice, ADMIN_TOKEN, "root")
    alice.get(BASE + "/console/#/admin")
    uid = wait(alice, lambda d: d.find_element(By.XPATH, "//label[text()='New user id']/following-sibling::input"), "the new-user form")
    uid.send_keys("carol")
    alice.find_element(By.XPATH, "//button[text()='Create user']").click()
    token = wait(alice, lambda d: d.find_element(By.CSS_SELECTOR, "output.link code").text, "carol's token")
    if not token.startswith("sst_"):
        raise TaskFailed(f"carol's token: {token}")
    row = wait(alice, lambda d: d.find_element(By.XPATH, "//tr[td[text()='carol']]"), "carol in the users table")
    row.find_element(By.XPATH, ".//button[text()='Revoke']").click()
    wait(alice, lambda d: d.switch_to.alert, "the confirmation").accept()
    wait(alice, lambda d: "carol revoked" in d.find_element(By.ID, "status").text, "carol revoked")
    row.find_element(By.XPATH, ".//button[text()='Claims']").click()
    claims = wait(alice, lambda d: row.find_element(By.CSS_SELECTOR, "input"), "carol's claims field")
    claims.send_keys("team=blue")
    row.find_element(By.XPATH, ".//button[text()='Save']").click()
    wait(alice, lambda d: "Claims of carol saved" in d.find_element(By.ID, "status").text and "team=blue" in row.text, "carol's claims saved")
    alice.find_element(By.XPATH, "//button[text()='Count']").click()
    wait(alice, lambda d: d.find_elements(By.XPATH, "//caption[text()='Buckets']/..//a[text()='spots']"), "the store's statistics")

    # The rules playground decides with the server's rules: bob may not write into alice's spot.
    alice.find_element(By.XPATH, "//label[text()='User id']/following-sibling::input").send_keys("bob")
    Select(alice.find_element(By.XPATH, "//label[text()='Operation']/following-sibling::select")).select_by_value("write")
    alice.find_element(By.XPATH, "//label[text()='Path (bucket/name)']/following-sibling::input").send_keys("spots/trip/new.jpg")
    alice.find_element(By.XPATH, "//button[text()='Decide']").click()
    verdict = wait(alice, lambda d: d.find_element(By.CSS_SELECTOR, "output.verdict").text, "the playground's verdict")
    if not verdict.startswith("create: deny"):
        raise TaskFailed(f"the playground let bob write into alice's spot: {verdict}")
    check_page(alice, "admin")

    # A one-time link signs a fresh browser in, and leaves the address bar.
    linked = browser()
    linked.get(LOGIN_LINK)
    wait(linked, lambda d: d.find_element(By.ID, "who-name").text == "alice", "signed in by the link")
    if "link=" in linked.current_url:
        raise TaskFailed("the link's secret stayed in the address bar")

    errors = [f"{entry['message']}" for driver in drivers for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    # The text file's refusal is an answer the console shows, not an error of the page.
    errors = [error for error in errors if "/uploads" not in error]
    if errors:
        raise TaskFailed("errors in the browser's console: " + " | ".join(errors))


try:
    run()
    print(json.dumps({"ok": True, "pages": checked_pages}))
except TaskFailed as failure:
    print(json.dumps({"ok": False, "reason": str(failure), "pages": checked_pages}))
    sys.exit(1)
finally:
    for driver in drivers:
        driver.quit()
