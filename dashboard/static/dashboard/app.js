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
// Forms that destroy something ask first.
document.addEventListener("submit", (event) => {
  const question = event.target.dataset.confirm;
  if (question && !confirm(question)) event.preventDefault();
});
