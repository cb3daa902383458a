// Copy buttons: <button data-copy="#element-id">Copy</button>
document.addEventListener("click", async (event) => {
  const button = event.target.closest("[data-copy]");
  if (!button) return;
  const source = document.querySelector(button.dataset.copy);
  const text = source.value !== undefined ? source.value : source.textContent;
  const status = document.getElementById("copy-status");
  try {
    await navigator.clipboard.writeText(text.trim());
    status.textContent = "Copied to the clipboard.";
  } catch (error) {
    const range = document.createRange();
    range.selectNodeContents(source);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    status.textContent = "Press Ctrl+C (or Cmd+C) to copy the selected text.";
  }
});
// A page that answers a post it refused (a wrong password, a bad setting) becomes the page's
// plain address in the history: Back or a reload there then asks for the page again instead of
// offering to send the form (and a password) once more.
if (document.body && document.body.dataset.answersPost !== undefined) {
  history.replaceState(history.state, "", location.href);
}
// Forms that destroy something ask first.
document.addEventListener("submit", (event) => {
  const question = (event.submitter && event.submitter.dataset.confirm) || event.target.dataset.confirm;
  if (question && !confirm(question)) event.preventDefault();
});
// A first visit: the account has no time zone yet, so the browser's is stored, once, and the
// page is drawn again with its times in that zone. The Account page can change it later.
// The page is drawn again only if the owner has not started using it: a reload must never
// throw away what they typed or cut short a form they sent.
(() => {
  const form = document.getElementById("time-zone-auto");
  if (!form || sessionStorage.getItem("ff-time-zone-sent")) return;
  let busy = false;
  for (const name of ["input", "keydown", "pointerdown", "submit", "beforeunload"]) {
    window.addEventListener(name, () => { busy = true; }, true);
  }
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!zone) return;
  sessionStorage.setItem("ff-time-zone-sent", "1");
  form.elements.timeZone.value = zone;
  fetch(form.action, { method: "POST", body: new FormData(form), redirect: "manual",
                       credentials: "same-origin" })
    .then(() => { if (!busy) location.reload(); });
})();
