#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Plans tab of `pawndex serve`: seconds from the click on the tab to its moves table, in
Chromium driven by chromedriver (issue 39: ready <= 1 s). Needs `pip install selenium` and a
running server: `pawndex serve --db masters.db --port 8745`, then
`python3 bench/plans_tab.py http://127.0.0.1:8745`. Each structure is opened, its first tab
(Similar structures) waited for, then Plans clicked, three times."""
import time, sys
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
opts = webdriver.ChromeOptions()
for a in ["--headless=new", "--no-sandbox", "--window-size=1360,1200"]:
    opts.add_argument(a)
d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
base = sys.argv[1]
fens = {"carlsbad": "8/pp3ppp/2p5/3p4/3P4/4P3/PP3PPP/8", "scheveningen": "8/pp3ppp/3pp3/8/4P3/8/PPP2PPP/8", "isolani": "8/pp3ppp/4p3/8/3P4/8/PP3PPP/8"}
for name, fen in fens.items():
    for run in range(3):
        d.get(f"{base}/?fen={fen.replace('/', '%2F')}")
        t0 = time.time()
        while not d.find_elements(By.CSS_SELECTOR, "#similar-table tbody tr") and time.time() - t0 < 30:
            time.sleep(0.02)
        t = time.time()
        d.find_element(By.ID, "tab-plans").click()
        while not d.find_elements(By.CSS_SELECTOR, "#plans-white tbody tr, #plans-none") and time.time() - t < 30:
            time.sleep(0.01)
        dt = time.time() - t
        title = d.find_element(By.ID, "structure-name").text
        print(f"{name} ({title}) run {run+1}: Plans tab ready {dt:.3f} s after the click")
d.quit()
