package main

// page is the guestbook UI, served for requests without cmd. Like the original, it
// keeps the messages comma-joined under the key "messages": it reads them with
// cmd=get and writes the list with the new message appended with cmd=set.
const page = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Guestbook</title>
<style>
body { font-family: sans-serif; margin: 2em auto; max-width: 40em; }
#messages div { border-bottom: 1px solid #ddd; padding: .4em 0; }
</style>
</head>
<body>
<h2>Guestbook</h2>
<form id="form">
<input id="message" placeholder="Messages" autofocus>
<button type="submit">Submit</button>
</form>
<div id="messages"></div>
<script>
var messages = [];
function show() {
  var box = document.getElementById("messages");
  box.textContent = "";
  messages.forEach(function (m) {
    var d = document.createElement("div");
    d.textContent = m;
    box.appendChild(d);
  });
}
function load() {
  fetch("guestbook.php?cmd=get&key=messages").then(function (r) { return r.json(); }).then(function (j) {
    messages = (j.data || "").split(",").filter(function (m) { return m !== ""; });
    show();
  });
}
document.getElementById("form").addEventListener("submit", function (e) {
  e.preventDefault();
  var input = document.getElementById("message");
  if (input.value === "") { return; }
  messages.push(input.value);
  input.value = "";
  fetch("guestbook.php?cmd=set&key=messages&value=" + encodeURIComponent(messages.join(","))).then(show);
});
load();
</script>
</body>
</html>
`
