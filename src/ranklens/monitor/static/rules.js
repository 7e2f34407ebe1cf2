// The rules page: add, edit and enable/disable rules through the JSON API (issue 13).
//
// CSRF-safe by construction: every write is a fetch() from this static script to this server's /api/v1
// routes carrying "Authorization: Bearer <token>"; the server refuses a write without that header whatever
// cookies come with it, and a cross-site page can neither read the token nor set the header. The token is
// typed by the user, kept in sessionStorage (this tab only; never a cookie) and sent only to same-origin
// /api/v1/ paths (the page's CSP, default-src 'self', forbids connecting anywhere else). Rows are built
// with textContent, never innerHTML.
(function () {
  "use strict";
  var KEY = "ranklens.write-token";
  var memoryToken = null; // when sessionStorage is unavailable

  function $(id) { return document.getElementById(id); }

  function getToken() {
    try { return window.sessionStorage.getItem(KEY) || memoryToken; } catch (e) { return memoryToken; }
  }

  function setToken(token) {
    memoryToken = token;
    try {
      if (token) { window.sessionStorage.setItem(KEY, token); } else { window.sessionStorage.removeItem(KEY); }
    } catch (e) { /* memory only */ }
  }

  // One request to this server's API. Resolves with the parsed JSON body; rejects with {status, error}
  // where error is the API's one error shape ({status, code, message, details?}).
  function api(method, path, body) {
    if (path.indexOf("/api/v1/") !== 0) { return Promise.reject({ status: 0, error: { message: "refused: not an API path" } }); }
    var headers = { "Accept": "application/json" };
    var token = getToken();
    if (token) { headers["Authorization"] = "Bearer " + token; }
    var init = {
      method: method,
      headers: headers,
      cache: "no-store",
      redirect: "error",
      credentials: method === "GET" ? "same-origin" : "omit", // a write never relies on the session cookie
    };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(path, init).then(function (resp) {
      return resp.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
        if (!resp.ok) {
          var err = data && data.error ? data.error : { status: resp.status, code: "error", message: "HTTP " + resp.status };
          throw { status: resp.status, error: err };
        }
        return data;
      });
    }, function () {
      throw { status: 0, error: { message: "the server did not answer" } };
    });
  }

  function describeError(failure) {
    var e = (failure && failure.error) || {};
    var text = (e.status || failure.status || "") + " " + (e.code || "error") + ": " + (e.message || "request failed");
    if (e.details && e.details.length > 1) {
      text += " (" + e.details.map(function (d) { return (d.loc || []).join(".") + ": " + d.message; }).join("; ") + ")";
    }
    if (failure.status === 401) { text += " (check the write token)"; }
    return text;
  }

  function showError(el, failure) {
    el.textContent = describeError(failure);
    el.hidden = false;
  }

  function clearError(el) {
    el.textContent = "";
    el.hidden = true;
  }

  function status(text) { $("rules-status").textContent = text; }

  // The expression that an edit starts from (the text syntax of ranklens gate).
  function exprOf(rule) {
    if (rule.kind === "threshold") { return rule.measure + " " + rule.op + " " + rule.value; }
    if (rule.kind === "window") { return rule.measure + " drop <= " + rule.max_drop + " window=" + rule.window_days; }
    return rule.measure + " drop <= 0 vs=" + rule.reference + " alpha=" + rule.alpha;
  }

  function cell(tr, text, cls) {
    var td = document.createElement("td");
    if (cls) { td.className = cls; }
    if (text !== null) { td.textContent = text; }
    tr.appendChild(td);
    return td;
  }

  function button(text, cls, onClick) {
    var b = document.createElement("button");
    b.type = "button";
    b.className = cls;
    b.textContent = text;
    b.addEventListener("click", onClick);
    return b;
  }

  var app, project, base, rules = [], loaded = false;

  function render() {
    var body = $("rules-body");
    while (body.firstChild) { body.removeChild(body.firstChild); }
    var canWrite = Boolean(getToken());
    rules.forEach(function (rule) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-rule-id", String(rule.id));
      if (!rule.enabled) { tr.className = "disabled"; }
      cell(tr, String(rule.id), "n");
      var what = cell(tr, rule.description, "rule");
      if (rule.name && rule.name !== rule.description) {
        var name = document.createElement("div");
        name.className = "muted";
        name.textContent = rule.name;
        what.appendChild(name);
      }
      cell(tr, rule.kind);
      cell(tr, rule.segment || "—");
      cell(tr, rule.system || "every system");
      var state = cell(tr, null, "nowrap");
      var badge = document.createElement("span");
      badge.className = "badge " + (rule.enabled ? "ok" : "skipped");
      badge.textContent = rule.enabled ? "enabled" : "disabled";
      state.appendChild(badge);
      var actions = cell(tr, null, "actions nowrap");
      var edit = button("Edit", "edit", function () { startEdit(tr, what, rule); });
      var toggle = button(rule.enabled ? "Disable" : "Enable", "toggle", function () { setEnabled(rule, !rule.enabled); });
      [edit, toggle].forEach(function (b) {
        b.disabled = !canWrite;
        if (!canWrite) { b.title = "writes need the write token"; }
        actions.appendChild(b);
      });
      body.appendChild(tr);
    });
    $("rules-empty").hidden = rules.length > 0;
  }

  function refresh() {
    return api("GET", base).then(function (data) {
      rules = (data && data.rules) || [];
      loaded = true;
      render();
    }, function (failure) { showError($("rule-error"), failure); });
  }

  function startEdit(tr, what, rule) {
    if (tr.querySelector("form.edit-rule")) { return; }
    var form = document.createElement("form");
    form.className = "edit-rule";
    form.setAttribute("autocomplete", "off");
    var input = document.createElement("input");
    input.type = "text";
    input.name = "expr";
    input.required = true;
    input.maxLength = 300;
    input.size = 28;
    input.value = exprOf(rule);
    input.setAttribute("aria-label", "expression of rule " + rule.id);
    var save = document.createElement("button");
    save.type = "submit";
    save.textContent = "Save";
    var cancel = button("Cancel", "cancel", function () { render(); });
    var err = document.createElement("span");
    err.className = "error";
    err.setAttribute("role", "alert");
    err.hidden = true;
    form.appendChild(input);
    form.appendChild(save);
    form.appendChild(cancel);
    form.appendChild(err);
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      clearError(err);
      status("");
      save.disabled = true;
      api("PATCH", base + "/" + rule.id, { expr: input.value.trim() }).then(function (data) {
        status("Rule #" + data.rule.id + " edited: " + data.rule.description);
        return refresh();
      }, function (failure) {
        save.disabled = false;
        showError(err, failure);
      });
    });
    what.appendChild(form);
    input.focus();
  }

  function setEnabled(rule, enabled) {
    clearError($("rule-error"));
    status("");
    api("PATCH", base + "/" + rule.id, { enabled: enabled }).then(function (data) {
      status("Rule #" + data.rule.id + (enabled ? " enabled" : " disabled"));
      return refresh();
    }, function (failure) { showError($("rule-error"), failure); });
  }

  function addRule(ev) {
    ev.preventDefault();
    var errEl = $("rule-error");
    clearError(errEl);
    status("");
    var body = { expr: $("rule-expr").value.trim() };
    ["segment", "system", "name"].forEach(function (field) {
      var v = $("rule-" + field).value.trim();
      if (v) { body[field] = v; }
    });
    var before = {};
    rules.forEach(function (r) { before[r.id] = r; });
    api("POST", base, body).then(function (data) {
      var r = data.rule, old = before[r.id];
      if (!old) {
        status("Rule #" + r.id + " added: " + r.description);
      } else if (!old.enabled && r.enabled) {
        status("Rule #" + r.id + " exists already: enabled it again");
      } else {
        status("Rule #" + r.id + " exists already: nothing added");
      }
      $("rule-form").reset();
      return refresh();
    }, function (failure) { showError(errEl, failure); });
  }

  function tokenUi() {
    var has = Boolean(getToken());
    $("token-needed").hidden = has;
    $("rule-fieldset").disabled = !has;
    $("token-forget").hidden = !has;
    $("token-state").textContent = has ? "Token set for this tab: writes are enabled." : "No token: writes need the token.";
    if (loaded) { render(); } // else the server-rendered rows stay
  }

  function init() {
    app = $("rules-app");
    if (!app) { return; }
    project = app.getAttribute("data-project");
    base = "/api/v1/projects/" + encodeURIComponent(project) + "/rules";
    $("token-form").addEventListener("submit", function (ev) {
      ev.preventDefault();
      var input = $("token-input");
      var token = input.value.trim();
      input.value = "";
      if (!token) { return; }
      setToken(token);
      clearError($("rule-error"));
      tokenUi();
    });
    $("token-forget").addEventListener("click", function () {
      setToken(null);
      tokenUi();
    });
    $("rule-form").addEventListener("submit", addRule);
    refresh().then(tokenUi);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
