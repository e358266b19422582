import type { Locator } from 'playwright-core';

/** An element's text line by line as laid out: its characters grouped by the top of their box. */
export function lineTexts(target: Locator): Promise<string[]> {
  return target.evaluate((element) => {
    const walker = element.ownerDocument.createTreeWalker(element, 4 /* NodeFilter.SHOW_TEXT */);
    const range = element.ownerDocument.createRange();
    const texts: string[] = [];
    let lineTop = -Infinity;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let offset = 0; offset < node.data.length; offset += 1) {
        range.setStart(node, offset);
        range.setEnd(node, offset + 1);
        const top = range.getBoundingClientRect().top;
        if (top > lineTop + 2) {
          texts.push('');
          lineTop = top;
        }
        texts[texts.length - 1] += node.data[offset];
      }
    }
    return texts;
  });
}
