// A fenced code block in agent output (assets/stream_text.jsx renders it for every answer,
// streamed or finished): highlighted by Prism (react-syntax-highlighter's light build, the
// package rx.code_block uses, with a handful of languages bundled: nothing loads at run time),
// and a copy button that copies the raw code. The highlighter builds React elements from a
// token tree, never HTML strings, so untrusted code stays text.
import React, { useEffect, useRef, useState } from "react";
import SyntaxHighlighter from "react-syntax-highlighter/dist/esm/prism-light";
import bash from "react-syntax-highlighter/dist/esm/languages/prism/bash";
import c from "react-syntax-highlighter/dist/esm/languages/prism/c";
import cpp from "react-syntax-highlighter/dist/esm/languages/prism/cpp";
import css from "react-syntax-highlighter/dist/esm/languages/prism/css";
import diff from "react-syntax-highlighter/dist/esm/languages/prism/diff";
import go from "react-syntax-highlighter/dist/esm/languages/prism/go";
import java from "react-syntax-highlighter/dist/esm/languages/prism/java";
import javascript from "react-syntax-highlighter/dist/esm/languages/prism/javascript";
import json from "react-syntax-highlighter/dist/esm/languages/prism/json";
import jsx from "react-syntax-highlighter/dist/esm/languages/prism/jsx";
import markdown from "react-syntax-highlighter/dist/esm/languages/prism/markdown";
import markup from "react-syntax-highlighter/dist/esm/languages/prism/markup";
import python from "react-syntax-highlighter/dist/esm/languages/prism/python";
import rust from "react-syntax-highlighter/dist/esm/languages/prism/rust";
import sql from "react-syntax-highlighter/dist/esm/languages/prism/sql";
import toml from "react-syntax-highlighter/dist/esm/languages/prism/toml";
import tsx from "react-syntax-highlighter/dist/esm/languages/prism/tsx";
import typescript from "react-syntax-highlighter/dist/esm/languages/prism/typescript";
import yaml from "react-syntax-highlighter/dist/esm/languages/prism/yaml";

[bash, c, cpp, css, diff, go, java, javascript, json, jsx, markdown, markup, python, rust, sql,
  toml, tsx, typescript, yaml].forEach((lang) => SyntaxHighlighter.registerLanguage(null, lang));
// Names models write that Prism knows under another one.
const ALIASES = {
  "c++": "cpp", console: "bash", golang: "go", py3: "python", python3: "python", rs: "rust",
  shell: "bash", sh: "bash", zsh: "bash", text: "", plaintext: "", txt: "",
};
const MAX_HIGHLIGHT = 20000; // longer code is shown plain (Prism's cost grows with the text)

// The text of a hast node (react-markdown hands the unrendered tree as `node`).
function hastText(node) {
  if (!node) return "";
  if (node.type === "text") return node.value || "";
  return (node.children || []).map(hastText).join("");
}

function languageOf(codeNode) {
  const classes = (codeNode && codeNode.properties && codeNode.properties.className) || [];
  const found = classes.find((name) => String(name).startsWith("language-"));
  if (!found) return "";
  const name = String(found).slice("language-".length).toLowerCase();
  return name in ALIASES ? ALIASES[name] : name;
}

function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  // Plain-HTTP pages (a LAN address) have no clipboard API: the old way still works there.
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  try {
    document.execCommand("copy");
  } finally {
    area.remove();
  }
  return Promise.resolve();
}

const ICON = { width: 14, height: 14, viewBox: "0 0 24 24", fill: "none", stroke: "currentColor",
  strokeWidth: 2, strokeLinecap: "round", strokeLinejoin: "round", "aria-hidden": true };
const CopyIcon = () => (
  <svg {...ICON}>
    <rect x="8" y="8" width="14" height="14" rx="2" />
    <path d="M4 16c-1.1 0-2-.9-2-2V4c0-1.1.9-2 2-2h10c1.1 0 2 .9 2 2" />
  </svg>
);
const CheckIcon = () => (
  <svg {...ICON}>
    <path d="M20 6 9 17l-5-5" />
  </svg>
);

function CopyButton({ text }) {
  const [copied, setCopied] = useState(false);
  const timer = useRef(null);
  useEffect(() => () => clearTimeout(timer.current), []);
  const onClick = () => {
    copyText(text).then(
      () => {
        setCopied(true);
        clearTimeout(timer.current);
        timer.current = setTimeout(() => setCopied(false), 1500);
      },
      () => setCopied(false),
    );
  };
  return (
    <button type="button" className="code-copy" data-testid="code-copy" onClick={onClick}
      aria-label={copied ? "Copied" : "Copy code"} title="Copy code">
      {copied ? <CheckIcon /> : <CopyIcon />}
      <span>{copied ? "Copied" : "Copy"}</span>
    </button>
  );
}

// react-markdown's `pre` override: `node` is the <pre> element of the markdown tree, whose
// one child is the <code> element with the fence's language as a class.
export function CodeBlock({ node }) {
  const codeNode = node && (node.children || []).find((child) => child.tagName === "code");
  const code = hastText(codeNode).replace(/\n$/, "");
  const wanted = languageOf(codeNode);
  return (
    <div className="code-block" data-testid="code-block" data-language={wanted || undefined}>
      <div className="code-head">
        <span className="code-lang">{wanted || "code"}</span>
        <CopyButton text={code} />
      </div>
      {wanted && code.length <= MAX_HIGHLIGHT ? (
        <SyntaxHighlighter language={wanted} useInlineStyles={false} PreTag="pre"
          CodeTag="code" className="code-body">
          {code}
        </SyntaxHighlighter>
      ) : (
        <pre className="code-body"><code>{code}</code></pre>
      )}
    </div>
  );
}
