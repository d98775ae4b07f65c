/* The book's live calculators, the page side. A chapter places one with a Markdown cell:
 *
 *     <div class="ampere-calc" data-calc="hbm-fits"></div>
 *
 * The build (tools/site/ampere_site.py) writes window.AMPERE_LIVE into the page: the forms of the
 * calculators the page names (ampere.live.describe) and the URLs of the Pyodide core, the ampere wheel and
 * the worker, all served by the site. This script builds each form at once; when a calculator comes near
 * the screen it starts the worker (Python in WebAssembly) and shows the answer of the package's own model.
 * Every change of an input runs the model again.
 *
 * State, for readers and tests: data-state on the element ("idle", "loading", "running", "ready",
 * "invalid" when the model refused the inputs, "failed"), data-first-ms (page time of the first answer,
 * ms since navigation), data-run-ms (last request to answer, ms), data-python-ms (of which the model's
 * Python call), data-runs (answers shown); the
 * properties ampereValues (the inputs of the last request) and ampereHtml (the answer as Python wrote it).
 */
(function () {
  "use strict";
  const config = window.AMPERE_LIVE;
  if (!config) {
    return;
  }
  const elements = Array.from(document.querySelectorAll("div.ampere-calc[data-calc]"));
  if (!elements.length) {
    return;
  }

  let worker = null;
  let nextId = 1;
  const pending = new Map();

  function absolute(url) {
    return new URL(url, document.baseURI).href;
  }

  function startWorker(onFatal) {
    if (worker) {
      return;
    }
    worker = new Worker(absolute(config.worker), { type: "module" });
    worker.onmessage = (event) => {
      const msg = event.data;
      if (msg.type === "result") {
        const done = pending.get(msg.id);
        pending.delete(msg.id);
        if (done) {
          done(JSON.parse(msg.json));
        }
      } else if (msg.type === "stderr") {
        console.warn("[ampere live] " + msg.text);
      } else if (msg.type === "fatal") {
        onFatal(msg.message);
      }
    };
    worker.onerror = (event) => {
      console.error("[ampere live] worker error: " + event.message);
      onFatal(event.message);
    };
    worker.postMessage({ type: "init", pyodide: absolute(config.pyodide), wheel: absolute(config.wheel) });
  }

  function call(calc, values) {
    return new Promise((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      worker.postMessage({ type: "run", id: id, calc: calc, values: values });
    });
  }

  function make(tag, attrs, text) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => node.setAttribute(k, v));
    if (text !== undefined) {
      node.textContent = text;
    }
    return node;
  }

  function readValue(field, input) {
    if (field.kind === "choice") {
      return field.choices[Number(input.value)];
    }
    if (field.kind === "bool") {
      return input.checked;
    }
    if (field.kind === "int" || field.kind === "float") {
      const text = input.value.trim();
      const number = Number(text);
      // an empty or non-numeric entry goes to the model as text: its message names the field
      return text === "" || Number.isNaN(number) ? text : number;
    }
    return input.value;
  }

  function Calculator(el, spec, fail) {
    const inputs = {};
    const rows = {};
    let running = false;
    let again = false;
    let requested = 0;
    let visible = false;

    el.textContent = "";
    el.dataset.state = "idle";
    el.dataset.runs = "0";
    el.appendChild(make("p", { class: "ampere-calc-title" }, spec.title));
    const about = make("p", { class: "ampere-calc-description" }, spec.description + " The model: ");
    about.appendChild(make("code", {}, spec.call));
    about.appendChild(document.createTextNode(", explained in "));
    if (spec.chapter_url) {
      about.appendChild(make("a", { href: spec.chapter_url }, "its chapter"));
    } else {
      about.appendChild(document.createTextNode("this chapter"));
    }
    about.appendChild(document.createTextNode(", \u201c" + spec.section + "\u201d."));
    el.appendChild(about);
    const form = make("form", { class: "ampere-calc-form", autocomplete: "off" });
    form.addEventListener("submit", (event) => event.preventDefault());
    spec.fields.forEach((field) => {
      const id = "ampere-" + spec.name + "-" + field.name;
      const row = make("div", { class: "ampere-field" });
      const label = make("label", { for: id }, field.label + (field.unit ? " (" + field.unit + ")" : ""));
      let input;
      if (field.kind === "choice") {
        input = make("select", { id: id, name: field.name });
        field.choices.forEach((choice, i) => {
          const option = make("option", { value: String(i) }, String(choice));
          if (choice === field.default) {
            option.selected = true;
          }
          input.appendChild(option);
        });
      } else if (field.kind === "bool") {
        input = make("input", { id: id, name: field.name, type: "checkbox" });
        input.checked = field.default === true;
      } else if (field.kind === "text") {
        input = make("input", { id: id, name: field.name, type: "text", size: "32" });
        input.value = field.default;
      } else {
        input = make("input", { id: id, name: field.name, type: "number", step: field.kind === "int" ? "1" : "any" });
        if (field.minimum !== null) {
          input.min = String(field.minimum);
        }
        if (field.maximum !== null) {
          input.max = String(field.maximum);
        }
        input.value = String(field.default);
      }
      if (field.help) {
        input.title = field.help;
      }
      row.appendChild(label);
      row.appendChild(input);
      form.appendChild(row);
      inputs[field.name] = input;
      rows[field.name] = row;
    });
    el.appendChild(form);
    const status = make("p", { class: "ampere-calc-status", role: "status" });
    const output = make("div", { class: "ampere-calc-output", "aria-live": "polite" });
    el.appendChild(status);
    el.appendChild(output);

    function values() {
      const out = {};
      spec.fields.forEach((field) => {
        out[field.name] = readValue(field, inputs[field.name]);
      });
      return out;
    }

    function showFields() {
      const now = values();
      spec.fields.forEach((field) => {
        const rule = field.only_for;
        rows[field.name].hidden = Boolean(rule) && !rule[1].includes(now[rule[0]]);
      });
    }

    function run() {
      if (!worker) {
        return;
      }
      if (running) {
        again = true;
        return;
      }
      running = true;
      requested = performance.now();
      const sent = values();
      el.ampereValues = sent;
      el.dataset.state = el.dataset.runs === "0" ? "loading" : "running";
      status.textContent = el.dataset.runs === "0"
        ? "Starting Python in your browser (the first answer takes a few seconds)..."
        : "Running the model...";
      call(spec.name, sent).then((result) => {
        running = false;
        const now = performance.now();
        if (result.fatal) {
          console.error("[ampere live] " + spec.name + ": " + result.fatal);
          fail(result.fatal);
          return;
        }
        el.dataset.runMs = String(Math.round(now - requested));
        el.dataset.pythonMs = result.seconds === undefined ? "" : String(Math.round(1000 * result.seconds));
        if (result.error) {
          output.textContent = "";
          output.appendChild(make("p", { class: "ampere-calc-error" }, result.error));
          el.dataset.state = "invalid";
          status.textContent = "The model refused these inputs:";
        } else {
          output.innerHTML = result.html;
          el.ampereHtml = result.html;
          el.dataset.state = "ready";
          const took = now - requested < 1000 ? Math.round(now - requested) + " ms"
            : ((now - requested) / 1000).toFixed(1) + " s";
          status.textContent = el.dataset.runs === "0"
            ? "Python started in your browser and " + spec.call + " answered in " + took + "."
            : "Computed in your browser by " + spec.call + " in " + took + ".";
        }
        if (!el.dataset.firstMs) {
          el.dataset.firstMs = String(Math.round(now));
        }
        el.dataset.runs = String(Number(el.dataset.runs) + 1);
        if (again) {
          again = false;
          run();
        }
      });
    }

    let timer = null;
    form.addEventListener("change", () => {
      clearTimeout(timer);
      showFields();
      run();
    });
    form.addEventListener("input", (event) => {
      if (event.target.tagName === "INPUT" && event.target.type !== "checkbox") {
        clearTimeout(timer);
        timer = setTimeout(() => {
          showFields();
          run();
        }, 600);
      }
    });
    showFields();

    return {
      element: el,
      show() {
        if (!visible) {
          visible = true;
          run();
        }
      },
      failed(message) {
        el.dataset.state = "failed";
        status.textContent = "Python could not start in this browser: " + message;
      },
    };
  }

  const calculators = [];
  function failAll(message) {
    calculators.forEach((c) => c.failed(message));
  }
  elements.forEach((el) => {
    const spec = config.calculators[el.dataset.calc];
    if (spec) {
      calculators.push(Calculator(el, spec, failAll));
    }
  });

  if (location.protocol === "file:") {
    calculators.forEach((c) => {
      c.element.dataset.state = "failed";
      c.element.querySelector(".ampere-calc-status").textContent =
        "The calculators run Python in your browser, which needs the site served over HTTP: "
        + "run `python -m http.server` in the site's folder and open http://localhost:8000/.";
    });
    return;
  }

  function reveal(calc) {
    startWorker(failAll);
    calc.show();
  }

  if ("IntersectionObserver" in window) {
    const observer = new IntersectionObserver((entries) => {
      entries.forEach((entry) => {
        if (entry.isIntersecting) {
          observer.unobserve(entry.target);
          reveal(calculators.find((c) => c.element === entry.target));
        }
      });
    }, { rootMargin: "0px 0px 200px 0px" });  // near the screen, below
    calculators.forEach((c) => observer.observe(c.element));
  } else {
    calculators.forEach(reveal);
  }
})();
