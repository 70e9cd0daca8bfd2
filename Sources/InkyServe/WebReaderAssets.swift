/// The browser reader's style and script, served inline: one request per page of HTML.
extension WebReader {
    static let style = """
        body{margin:0;font:16px/1.4 system-ui,sans-serif;background:#111;color:#eee}
        a{color:inherit;text-decoration:none}
        header{padding:.6em 1em;background:#222;position:sticky;top:0}header a{margin-right:.3em}
        header .opds{float:right;opacity:.6}main{padding:1em}h2{font-size:1.1em;margin:.5em 0}
        .grid{list-style:none;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(9em,1fr));gap:1em}
        .grid li a{display:flex;flex-direction:column;gap:.3em}.grid img{width:100%;aspect-ratio:2/3;object-fit:cover;background:#333}
        .grid .icon{background:#222;aspect-ratio:2/3;display:flex;align-items:center;justify-content:center}
        .grid .icon::before{content:"";width:55%;height:38%;background:#c9a227;border-radius:3px 6px 6px 6px;box-shadow:-6px -6px 0 -2px #a8841a}
        .note{opacity:.6;font-size:.85em}.problem{color:#f88}
        body.reader{height:100vh;display:flex;flex-direction:column;overflow:hidden;user-select:none}
        #page{flex:1;min-height:0;object-fit:contain;width:100%;cursor:pointer;touch-action:pan-y pinch-zoom}
        nav{display:flex;gap:1em;align-items:center;padding:.4em 1em;background:#222}nav #back{flex:1;overflow:hidden;white-space:nowrap}
        nav #previous,nav #next{font-size:1.6em;padding:0 .5em}
        """

    /// Arrow keys, Space and Page Up/Down; a click on the left or right half; a horizontal
    /// swipe. The next two pages are fetched ahead at the width the screen needs (the server
    /// then has them converted, and does not count them as read); the address
    /// keeps the page, so a reload stays there. Each page shown is fetched from the server,
    /// which records it as read (the reading state resumes here next time).
    static let script = """
        const image = document.getElementById('page'), position = document.getElementById('position');
        const width = () => Math.min(8192, Math.ceil(window.innerWidth * (window.devicePixelRatio || 1) / 100) * 100);
        const source = n => comic.pages + '?path=' + encodeURIComponent(comic.path).replace(/%2F/g, '/') + '&page=' + n + '&width=' + width();
        // Fetched ahead, not read yet: the server keeps it converted and does not count it.
        const early = n => source(n) + '&ahead=1';
        const ahead = [];
        function show(n) {
          if (n < 0) return;
          if (n >= comic.count) { window.location.href = comic.back; return; }
          comic.page = n;
          image.src = source(n);
          image.alt = 'Page ' + (n + 1) + ' of ' + comic.count;
          position.textContent = (n + 1) + ' / ' + comic.count;
          history.replaceState(null, '', comic.reader + '?path=' + encodeURIComponent(comic.path) + '&page=' + n);
          preload(n);
        }
        function preload(n) {
          ahead.length = 0;
          for (let k = n + 1; k <= Math.min(n + 2, comic.count - 1); k++) { const next = new Image(); next.src = early(k); ahead.push(next); }
        }
        const forward = () => show(comic.page + 1), backward = () => show(comic.page - 1);
        document.addEventListener('keydown', event => {
          const next = comic.rtl ? 'ArrowLeft' : 'ArrowRight', previous = comic.rtl ? 'ArrowRight' : 'ArrowLeft';
          if ([next, ' ', 'PageDown'].includes(event.key)) { forward(); event.preventDefault(); }
          else if ([previous, 'PageUp', 'Backspace'].includes(event.key)) { backward(); event.preventDefault(); }
          else if (event.key === 'Escape') { window.location.href = comic.back; }
        });
        image.addEventListener('click', event => {
          const left = event.clientX < image.getBoundingClientRect().width / 2;
          (left !== comic.rtl) ? backward() : forward();
        });
        let touch = null;
        image.addEventListener('touchstart', event => { touch = event.changedTouches[0]; }, {passive: true});
        image.addEventListener('touchend', event => {
          if (!touch) return;
          const dx = event.changedTouches[0].clientX - touch.clientX, dy = event.changedTouches[0].clientY - touch.clientY;
          touch = null;
          if (Math.abs(dx) > 50 && Math.abs(dx) > Math.abs(dy)) { ((dx < 0) !== comic.rtl) ? forward() : backward(); event.preventDefault(); }
        });
        document.getElementById('next').addEventListener('click', event => { event.preventDefault(); forward(); });
        document.getElementById('previous').addEventListener('click', event => { event.preventDefault(); backward(); });
        preload(comic.page);
        """
}
