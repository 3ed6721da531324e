/*
 * The admin's change notice (affordances.admin.live): while the page is visible, ask the
 * object's version every ~700 ms; when it differs from the version the page was rendered
 * for, fill the live region with the notice and stop. A poll, not a stream: it holds no
 * server worker between requests, so it works under WSGI and ASGI alike.
 *
 * No inline script and no inline style: the page stays within a strict
 * Content-Security-Policy (script-src 'self').
 */
(function () {
    "use strict";
    var region = document.getElementById("affordances-changed");
    var notice = document.getElementById("affordances-changed-notice");
    if (!region || !notice || !window.fetch) {
        return;
    }
    var url = region.getAttribute("data-version-url");
    var opened = region.getAttribute("data-version");
    var every = parseInt(region.getAttribute("data-every"), 10) || 700;
    var timer = null;
    var asking = false;
    var done = false;

    function visible() {
        return document.visibilityState === "visible";
    }

    function show() {
        done = true;
        region.appendChild(notice.content.cloneNode(true));
    }

    function later() {
        if (!done && timer === null && visible()) {
            timer = window.setTimeout(ask, every);
        }
    }

    function ask() {
        timer = null;
        if (done || asking || !visible()) {
            return;
        }
        asking = true;
        window.fetch(url, {
            credentials: "same-origin",
            cache: "no-store",
            headers: {"Accept": "application/json"}
        }).then(function (response) {
            if (response.status >= 400 && response.status < 500) {
                // Gone, hidden from this user, or the session ended: nothing to compare.
                done = true;
                return null;
            }
            return response.ok ? response.json() : null;
        }).then(function (body) {
            if (body && String(body.version) !== opened) {
                show();
            }
        }).catch(function () {
            // The network or the server failed this once: ask again next time.
        }).then(function () {
            asking = false;
            later();
        });
    }

    document.addEventListener("visibilitychange", function () {
        // Back in view: ask at once (a change made meanwhile is shown without waiting).
        if (visible() && timer === null) {
            ask();
        }
    });
    later();
}());
