/**
 * Small line icons drawn as SVG (16×16, `currentColor`), built with DOM calls like everything
 * else in the webview. Glyphs from a font (⌗, 📄) render as empty boxes where the font lacks
 * them; these draw the same everywhere and follow the theme's text colour.
 */

const SVG = 'http://www.w3.org/2000/svg';

/** Each icon is one or more path strings on a 16×16 grid, stroked; `F:` marks a filled one. */
const PATHS = {
  check: ['M3 8.5l3 3 7-7'],
  cross: ['M4 4l8 8', 'M12 4l-8 8'],
  chevron: ['M6 4l4 4-4 4'],
  file: ['M4 1.5h5l3 3v10H4z', 'M9 1.5v3h3'],
  selection: ['M6 2H3v12h3', 'M10 2h3v12h-3', 'M6 6h4', 'M6 10h4'],
  eye: [
    'M1.5 8s2.5-4.5 6.5-4.5S14.5 8 14.5 8 12 12.5 8 12.5 1.5 8 1.5 8z',
    'M8 6.2a1.8 1.8 0 100 3.6 1.8 1.8 0 000-3.6z',
  ],
  search: ['M7 2.5a4.5 4.5 0 100 9 4.5 4.5 0 000-9z', 'M10.3 10.3L14 14'],
  terminal: ['M2 3h12v10H2z', 'M4.5 6l2 2-2 2', 'M8 10.5h3.5'],
  pencil: ['M11 2.5l2.5 2.5L6 12.5 3 13l.5-3z'],
  globe: [
    'M8 1.5a6.5 6.5 0 100 13 6.5 6.5 0 000-13z',
    'M1.5 8h13',
    'M8 1.5c2 2 2 11 0 13',
    'M8 1.5c-2 2-2 11 0 13',
  ],
  tool: ['M10 2a3 3 0 00-2.8 4.1L2.5 10.8l2.7 2.7 4.7-4.7A3 3 0 1010 2z'],
  warning: ['M8 2l6.5 11.5h-13z', 'M8 6.5v3.5', 'M8 11.8v.4'],
  stop: ['M4 4h8v8H4z'],
  send: ['M2 8l12-5.5L10 14l-2-4.5z', 'M8 9.5L14 2.5'],
  history: ['M2.5 8a5.5 5.5 0 105.5-5.5A5.5 5.5 0 003.5 5', 'M3.5 2v3h3', 'M8 5v3.5l2.5 1.5'],
  undo: ['M5 3.5L2 6.5l3 3', 'M2.5 6.5H10a3.5 3.5 0 010 7H7'],
  diff: ['M4 2v8', 'M1.5 4.5h5', 'M9.5 11.5h5', 'M12 6v8'],
  agent: ['M4 6.5h8v6H4z', 'M8 4v2.5', 'M8 2.5v.5', 'M6.3 9.2h.1', 'M9.6 9.2h.1', 'M2 9v2', 'M14 9v2'],
  model: [
    'M4.5 4.5h7v7h-7z',
    'M6.5 2v2.5',
    'M9.5 2v2.5',
    'M6.5 11.5V14',
    'M9.5 11.5V14',
    'M2 6.5h2.5',
    'M2 9.5h2.5',
    'M11.5 6.5H14',
    'M11.5 9.5H14',
  ],
  circle: ['M8 2.5a5.5 5.5 0 100 11 5.5 5.5 0 000-11z'],
  progress: ['M8 2.5a5.5 5.5 0 100 11 5.5 5.5 0 000-11z', 'F:M8 2.5a5.5 5.5 0 010 11z'],
} as const;

export type IconName = keyof typeof PATHS;

/** An icon element (decorative: hidden from screen readers, the label says what it is). */
export function icon(name: IconName, className = 'icon'): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('class', `${className} icon-${name}`);
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  for (const d of PATHS[name]) {
    const path = document.createElementNS(SVG, 'path');
    if (d.startsWith('F:')) {
      path.setAttribute('d', d.slice(2));
      path.setAttribute('fill', 'currentColor');
    } else {
      path.setAttribute('d', d);
    }
    svg.append(path);
  }
  return svg;
}
