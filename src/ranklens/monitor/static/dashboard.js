// Draws every <div class="chart" data-figure="NAME"> from the JSON in <script id="figure-NAME">.
(function () {
  "use strict";
  function draw() {
    var charts = document.querySelectorAll("div.chart[data-figure]");
    for (var i = 0; i < charts.length; i++) {
      var div = charts[i];
      var src = document.getElementById("figure-" + div.getAttribute("data-figure"));
      if (!src) { continue; }
      var fig = JSON.parse(src.textContent);
      window.Plotly.newPlot(div, fig.data, fig.layout, { displaylogo: false, displayModeBar: "hover", responsive: true }).then(function (gd) {
        gd.setAttribute("data-rendered", "true");
      });
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
