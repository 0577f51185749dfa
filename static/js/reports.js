// Filter forms marked "autosubmit" apply a choice as soon as it is made; the button stays for keyboards without JS.
(function () {
  document.querySelectorAll("form.autosubmit select").forEach((select) => {
    select.addEventListener("change", () => select.form.submit());
  });
})();
