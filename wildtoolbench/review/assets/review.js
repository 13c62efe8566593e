// wtb review: keyboard and form handling of the review pages (docs/review.md §2.3).
// Every change is a POST of JSON with the server's token; the page reloads after it, so what is shown
// is always what the database holds.
(() => {
  "use strict";
  const token = document.querySelector('meta[name="wtb-token"]').content;
  const reviewer = document.body.dataset.reviewer || "";
  const flash = document.getElementById("flash");

  function say(text, kind) {
    flash.textContent = text;
    flash.className = kind || "info";
    flash.hidden = false;
  }

  const pending = sessionStorage.getItem("wtb-flash");
  if (pending) {
    sessionStorage.removeItem("wtb-flash");
    say(pending, "ok");
  }

  function reloadWith(message, hash) {
    sessionStorage.setItem("wtb-flash", message);
    if (hash !== undefined) sessionStorage.setItem("wtb-task", hash);
    location.reload();
  }

  // ---------------------------------------------------------------- the reviewer's name
  const dialog = document.getElementById("name-dialog");
  const nameInput = document.getElementById("name-input");
  function askName() {
    if (!dialog.open) dialog.showModal();
    nameInput.value = reviewer;
    nameInput.focus();
  }
  document.getElementById("name-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = nameInput.value.trim();
    if (!name) return;
    document.cookie = "wtb_reviewer=" + encodeURIComponent(name) + "; path=/; SameSite=Strict; max-age=31536000";
    dialog.close();
    location.reload();
  });
  const change = document.getElementById("change-reviewer");
  if (change) change.addEventListener("click", askName);
  if (!reviewer) {
    if (document.cookie.includes("wtb_reviewer=")) {
      say("That name was not accepted: 1-40 letters, digits, spaces or . @ ' - _, starting with a letter or digit.", "error");
    }
    askName();
  }

  async function post(url, data) {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-WTB-Token": token },
      body: JSON.stringify(Object.assign({ reviewer: reviewer }, data)),
    });
    let answer = {};
    try {
      answer = await response.json();
    } catch (ignored) {
      answer = {};
    }
    if (!response.ok) {
      const problems = (answer.problems || []).map((p) => p.field + ": " + p.message);
      const error = new Error(answer.error || "the server answered " + response.status);
      error.problems = problems;
      error.status = response.status;
      throw error;
    }
    return answer;
  }

  // ---------------------------------------------------------------- keys help
  const keys = document.getElementById("keys");
  function toggleKeys(show) {
    if (!keys) return;
    keys.hidden = show === undefined ? !keys.hidden : !show;
  }
  document.getElementById("show-keys").addEventListener("click", () => toggleKeys());

  function typing(event) {
    const t = event.target;
    return (dialog && dialog.open) || (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT"));
  }

  // ---------------------------------------------------------------- the queue
  const queue = document.getElementById("queue");
  if (queue) {
    const rows = Array.from(queue.querySelectorAll("tr.qrow"));
    let current = 0;
    const select = (i) => {
      if (!rows.length) return;
      rows[current].classList.remove("sel");
      current = Math.max(0, Math.min(rows.length - 1, i));
      rows[current].classList.add("sel");
      rows[current].scrollIntoView({ block: "nearest" });
    };
    rows.forEach((row, i) =>
      row.addEventListener("click", (event) => {
        if (event.target.tagName !== "A") location.href = row.dataset.href;
        select(i);
      })
    );
    document.addEventListener("keydown", (event) => {
      if (typing(event) || event.ctrlKey || event.metaKey || event.altKey) return;
      const k = event.key;
      if (k === "j") select(current + 1);
      else if (k === "k") select(current - 1);
      else if (k === "Enter" && rows.length) location.href = rows[current].dataset.href;
      else if (k === "g") location.href = "/agreement";
      else if (k === "x") location.href = "/export";
      else if (k === "?") toggleKeys();
      else if (k === "Escape") toggleKeys(false);
      else return;
      event.preventDefault();
    });
  }

  // ---------------------------------------------------------------- a session
  const session = document.getElementById("session");
  if (!session) {
    if (!queue) {
      document.addEventListener("keydown", (event) => {
        if (typing(event)) return;
        if (event.key === "?") toggleKeys();
        else if (event.key === "u") location.href = "/";
      });
    }
    return;
  }
  const pos = Number(session.dataset.pos);
  const version = Number(session.dataset.version);
  const tasks = Array.from(document.querySelectorAll("section.task"));
  let task = 0;
  let field = -1;

  function fieldsOf(t) {
    return Array.from(tasks[t].querySelectorAll(".field"));
  }
  function selectTask(t, scroll, remember) {
    if (!tasks.length) return;
    tasks[task].classList.remove("current");
    task = Math.max(0, Math.min(tasks.length - 1, t));
    tasks[task].classList.add("current");
    field = -1;
    document.querySelectorAll(".field.selected").forEach((f) => f.classList.remove("selected"));
    if (scroll !== false) tasks[task].scrollIntoView({ block: "start" });
    // not while the page loads: the browser would scroll to the new fragment once it has loaded
    if (remember !== false) history.replaceState(null, "", "#t" + task);
  }
  function selectField(step) {
    const list = fieldsOf(task);
    if (!list.length) return;
    if (field >= 0) list[field].classList.remove("selected");
    field = (field + step + list.length) % list.length;
    list[field].classList.add("selected");
    list[field].focus();
    list[field].scrollIntoView({ block: "nearest" });
  }

  const kept = sessionStorage.getItem("wtb-task");
  sessionStorage.removeItem("wtb-task");
  const given = location.hash;
  const start = /^#?t(\d+)/.exec(kept || given);
  selectTask(start ? Number(start[1]) : 0, false, false);
  if (kept) {
    tasks[task].scrollIntoView({ block: "start" });
  } else if (given) {
    const target = document.getElementById(given.slice(1));
    if (target) target.scrollIntoView({ block: "start" });
  }

  async function verdict(t, kind, reason) {
    try {
      await post("/api/verdict", { pos: pos, task: t, verdict: kind, reason: reason || "", version: version });
      reloadWith("saved: task " + t + " " + (kind === "accept" ? "accepted" : "rejected") + " by " + reviewer, "t" + t);
    } catch (error) {
      say(error.message, "error");
    }
  }
  function reject(t) {
    const form = tasks[t].querySelector(".reason-form");
    form.hidden = false;
    const input = form.querySelector("input");
    input.focus();
  }
  tasks.forEach((section, t) => {
    section.addEventListener("click", () => {
      if (t !== task) selectTask(t, false);
    });
    section.querySelector("button.accept").addEventListener("click", () => verdict(t, "accept"));
    section.querySelector("button.reject").addEventListener("click", () => reject(t));
    const form = section.querySelector(".reason-form");
    const input = form.querySelector("input");
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const reason = input.value.trim();
      if (!reason) {
        say("a rejection needs a reason", "error");
        return;
      }
      verdict(t, "reject", reason);
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        form.hidden = true;
        input.blur();
        event.stopPropagation();
      }
    });
  });

  async function acceptRest() {
    try {
      const answer = await post("/api/accept-rest", { pos: pos, version: version });
      reloadWith("saved: accepted task(s) " + (answer.accepted.join(", ") || "none left") + " by " + reviewer, "t" + task);
    } catch (error) {
      say(error.message, "error");
    }
  }

  function edit(box) {
    if (box.querySelector("textarea")) return;
    const pre = box.querySelector("pre.value");
    const editor = document.createElement("div");
    editor.className = "editor";
    const area = document.createElement("textarea");
    area.value = pre.textContent;
    area.rows = Math.min(24, Math.max(3, area.value.split("\n").length + 1));
    area.spellcheck = false;
    const mode = document.createElement("select");
    for (const [value, label] of [["json", "JSON"], ["text", "text"]]) {
      const option = document.createElement("option");
      option.value = value;
      option.textContent = label;
      mode.appendChild(option);
    }
    mode.value = box.dataset.mode;
    const note = document.createElement("input");
    note.placeholder = "note (optional): why this change";
    note.maxLength = 2000;
    const save = document.createElement("button");
    save.type = "button";
    save.textContent = "save (Ctrl+Enter)";
    save.className = "save";
    const cancel = document.createElement("button");
    cancel.type = "button";
    cancel.textContent = "cancel (Esc)";
    const problem = document.createElement("div");
    problem.className = "problem";
    problem.hidden = true;
    const bar = document.createElement("div");
    bar.className = "editor-bar";
    bar.append(mode, note, save, cancel);
    editor.append(area, bar, problem);
    pre.hidden = true;
    box.appendChild(editor);
    area.focus();
    const close = () => {
      editor.remove();
      pre.hidden = false;
      box.focus();
    };
    const submit = async () => {
      save.disabled = true;
      try {
        const answer = await post("/api/edit", {
          pos: pos,
          version: version,
          path: box.dataset.path,
          text: area.value,
          mode: mode.value,
          note: note.value,
        });
        const left = answer.findings.length;
        reloadWith("saved " + box.dataset.path + ": version " + answer.version + ", " + left + " finding(s) on the session now", "t" + task);
      } catch (error) {
        problem.hidden = false;
        problem.textContent = error.problems && error.problems.length ? "not saved:\n" + error.problems.join("\n") : error.message;
        save.disabled = false;
        say(
          error.status === 409
            ? "not saved: the session changed meanwhile (your text is still in the editor)"
            : "not saved: the reason is under the editor, your text is still in it",
          "error"
        );
      }
    };
    save.addEventListener("click", submit);
    cancel.addEventListener("click", close);
    editor.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        submit();
      } else if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        close();
      }
    });
  }
  document.querySelectorAll(".field button.edit").forEach((button) =>
    button.addEventListener("click", (event) => {
      event.stopPropagation();
      const box = button.closest(".field");
      const t = tasks.indexOf(box.closest("section.task"));
      if (t >= 0 && t !== task) selectTask(t, false);
      edit(box);
    })
  );

  document.addEventListener("keydown", (event) => {
    if (typing(event) || event.ctrlKey || event.metaKey || event.altKey) return;
    const k = event.key;
    const next = document.getElementById("next-session");
    const prev = document.getElementById("prev-session");
    if (k === "j") selectTask(task + 1);
    else if (k === "k") selectTask(task - 1);
    else if (k === "a") verdict(task, "accept");
    else if (k === "A") acceptRest();
    else if (k === "r") reject(task);
    else if (k === "f") selectField(1);
    else if (k === "F") selectField(-1);
    else if (k === "e") {
      const list = fieldsOf(task);
      if (field < 0) selectField(1);
      if (list[field]) edit(list[field]);
    } else if (k === "n" && next) location.href = next.href;
    else if (k === "p" && prev) location.href = prev.href;
    else if (k === "u") location.href = "/";
    else if (k === "?") toggleKeys();
    else if (k === "Escape") toggleKeys(false);
    else return;
    event.preventDefault();
  });
})();
