# The pages (server-rendered HTML, the daily record and its feeds, the dataset export) in a
# real browser: headless Chromium (Debian's, as for lowdown-observe) opens them with
# JavaScript off, over records made through lowdown-proxy with server-everything and a
# Scanner run against loopback fixtures.

TEST_TARGETS += test-pages

.PHONY: test-pages pages-screenshot

test-pages: setup-npm setup-chromium setup-server build-server build-js-binding ## the pages in headless Chromium on SQLite and PostgreSQL: search, a target page's charts against the API answer, accessibility, feeds parsed, export twice
	url="$$(server/scripts/pg-start.sh)"; trap 'server/scripts/pg-stop.sh' EXIT; \
	LOWDOWN_TEST_DATABASE_URL="$$url" node --test --test-concurrency=1 --test-reporter=spec tests/pages/

pages-screenshot: setup-npm setup-chromium build-server build-js-binding ## retake docs/images/target-page.png (the README's screenshot) from the browser test's target page
	mkdir -p docs/images
	LOWDOWN_SCREENSHOT=$(ROOT)/docs/images/target-page.png node --test --test-concurrency=1 --test-reporter=spec tests/pages/
