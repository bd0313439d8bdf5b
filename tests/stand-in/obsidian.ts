/**
 * A stand-in of the subset of the Obsidian API that Vault MCP uses, so the plugin (and the built
 * `main.js`) runs under Node in tests. jest maps `obsidian` to this file. The vault lives in a real
 * folder; files are read and written with `node:fs`. Shapes follow `node_modules/obsidian/obsidian.d.ts`.
 *
 * Like Obsidian, the stand-in does not load dot-files or dot-folders (`.obsidian`, `.trash`, `.git`)
 * into the vault tree; the plugin reaches its data folder through `vault.adapter`.
 *
 * Test-only extras (not in Obsidian): `createTestApp`, `Notice.messages`, `clipboard`,
 * `Plugin.commands`/`statusBarItems`/`settingTabs`, `StandInElement` helpers (`findText`, `click`…).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as nodePath from "node:path";
import { parseDocument, stringify } from "yaml";
import { splitFrontmatter } from "../../src/core/frontmatter";
import { computeLinkMaps, LinkResolver } from "../../src/core/links/resolver";
import { renameContext, rewriteLinks, shortestLinkpath } from "../../src/core/links/rewrite";
import type { NoteMetadata } from "../../src/core/metadata";
import { parseNote } from "../../src/core/parser";

// ---------------------------------------------------------------------------------------------
// Utilities

export function normalizePath(path: string): string {
  let p = path.replace(/([\\/])+/g, "/").replace(/(^\/+|\/+$)/g, "");
  if (p === "") p = "/";
  return p.replace(/\u00A0|\u202F/g, " ").normalize("NFC");
}

export const Platform = {
  isDesktop: true,
  isMobile: false,
  isDesktopApp: true,
  isMobileApp: false,
  isIosApp: false,
  isAndroidApp: false,
  isPhone: false,
  isTablet: false,
  isMacOS: process.platform === "darwin",
  isWin: process.platform === "win32",
  isLinux: process.platform === "linux",
  isSafari: false,
  resourcePathPrefix: "app://local/",
};

export function requestUrl(): never {
  throw new Error("requestUrl is not available in the test stand-in (no network in tests).");
}

export interface Debouncer<T extends unknown[], V> {
  (...args: [...T]): this;
  cancel(): this;
  run(): V | void;
}

export function debounce<T extends unknown[], V>(cb: (...args: [...T]) => V, timeout = 0, resetTimer = false): Debouncer<T, V> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let pending: T | null = null;
  const fire = (): V | void => {
    timer = null;
    if (!pending) return;
    const args = pending;
    pending = null;
    return cb(...args);
  };
  const d = function (...args: [...T]) {
    pending = args;
    if (timer && resetTimer) {
      clearTimeout(timer);
      timer = null;
    }
    if (!timer) timer = setTimeout(fire, timeout);
    return d;
  } as Debouncer<T, V>;
  d.cancel = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    pending = null;
    return d;
  };
  d.run = () => {
    if (timer) clearTimeout(timer);
    return fire();
  };
  return d;
}

/** What `navigator.clipboard.writeText` last received (Node 20 has no `navigator`; the stand-in provides one). */
export const clipboard = { text: "" };
{
  const g = globalThis as { navigator?: { clipboard?: unknown } };
  const fake = {
    writeText: (t: string) => {
      clipboard.text = t;
      return Promise.resolve();
    },
    readText: () => Promise.resolve(clipboard.text),
  };
  if (!g.navigator) Object.defineProperty(globalThis, "navigator", { value: { clipboard: fake }, configurable: true, writable: true });
  else if (!g.navigator.clipboard) Object.defineProperty(g.navigator, "clipboard", { value: fake, configurable: true });
}

// ---------------------------------------------------------------------------------------------
// Events and components

export interface EventRef {
  e: Events;
  name: string;
  fn: (...data: unknown[]) => unknown;
  ctx?: unknown;
}

export class Events {
  private readonly _handlers = new Map<string, EventRef[]>();
  on(name: string, callback: (...data: any[]) => unknown, ctx?: unknown): EventRef {
    const ref: EventRef = { e: this, name, fn: callback, ctx };
    const list = this._handlers.get(name) ?? [];
    list.push(ref);
    this._handlers.set(name, list);
    return ref;
  }
  off(name: string, callback: (...data: any[]) => unknown): void {
    const list = this._handlers.get(name);
    if (list) this._handlers.set(name, list.filter((r) => r.fn !== callback));
  }
  offref(ref: EventRef): void {
    const list = this._handlers.get(ref.name);
    if (list) this._handlers.set(ref.name, list.filter((r) => r !== ref));
  }
  trigger(name: string, ...data: unknown[]): void {
    for (const ref of [...(this._handlers.get(name) ?? [])]) this.tryTrigger(ref, data);
  }
  tryTrigger(ref: EventRef, args: unknown[]): void {
    try {
      ref.fn.apply(ref.ctx, args);
    } catch (e) {
      console.error(e);
    }
  }
  /** Test helper: how many handlers are registered for `name`. */
  listenerCount(name: string): number {
    return this._handlers.get(name)?.length ?? 0;
  }
}

export class Component {
  private _loaded = false;
  private _cleanups: (() => unknown)[] = [];
  private _children: Component[] = [];
  /** Calls `onload`; returns its promise (Obsidian awaits a plugin's `onload`). */
  load(): Promise<void> | void {
    if (this._loaded) return;
    this._loaded = true;
    const r = this.onload();
    for (const c of this._children) void c.load();
    return r;
  }
  onload(): Promise<void> | void {}
  /** Unloads children, runs registered cleanups, then calls `onunload`; returns its result. */
  unload(): Promise<void> | void {
    if (!this._loaded) return;
    this._loaded = false;
    for (const c of this._children.splice(0)) void c.unload();
    for (const cb of this._cleanups.splice(0)) cb();
    return this.onunload();
  }
  onunload(): Promise<void> | void {}
  addChild<T extends Component>(component: T): T {
    this._children.push(component);
    if (this._loaded) void component.load();
    return component;
  }
  removeChild<T extends Component>(component: T): T {
    this._children = this._children.filter((c) => c !== component);
    void component.unload();
    return component;
  }
  register(cb: () => unknown): void {
    this._cleanups.push(cb);
  }
  registerEvent(eventRef: EventRef): void {
    this.register(() => eventRef.e.offref(eventRef));
  }
  registerDomEvent(el: StandInElement, type: string, callback: (ev: unknown) => unknown): void {
    el.addEventListener(type, callback);
    this.register(() => el.removeEventListener(type, callback));
  }
  registerInterval(id: number): number {
    this.register(() => clearInterval(id));
    return id;
  }
  /** Test helper: how many cleanups are registered. */
  get registeredCount(): number {
    return this._cleanups.length;
  }
}

// ---------------------------------------------------------------------------------------------
// A minimal DOM

interface ElOptions {
  text?: string;
  cls?: string | string[];
  attr?: Record<string, string | number | boolean | null>;
  title?: string;
  value?: string;
  type?: string;
  placeholder?: string;
  href?: string;
}

export class StandInElement {
  readonly children: StandInElement[] = [];
  parent: StandInElement | null = null;
  readonly classes = new Set<string>();
  readonly attrs: Record<string, string> = {};
  readonly style: Record<string, string> = {};
  private ownText = "";
  value = "";
  checked = false;
  disabled = false;
  private readonly listeners = new Map<string, ((ev: unknown) => unknown)[]>();
  constructor(readonly tagName: string, o?: ElOptions | string) {
    if (typeof o === "string") this.addClass(o);
    else if (o) {
      if (o.text !== undefined) this.ownText = o.text;
      if (o.cls) this.addClass(...(Array.isArray(o.cls) ? o.cls : o.cls.split(" ")));
      for (const [k, v] of Object.entries(o.attr ?? {})) if (v !== null) this.attrs[k] = String(v);
      if (o.title) this.attrs.title = o.title;
      if (o.value !== undefined) this.value = o.value;
      if (o.type) this.attrs.type = o.type;
      if (o.placeholder) this.attrs.placeholder = o.placeholder;
      if (o.href) this.attrs.href = o.href;
    }
  }
  /** The element's window (Obsidian's `Node.win`): here just the timers. */
  get win(): { setTimeout: typeof setTimeout; clearTimeout: typeof clearTimeout; setInterval: typeof setInterval; clearInterval: typeof clearInterval } {
    return { setTimeout, clearTimeout, setInterval, clearInterval };
  }
  createEl(tag: string, o?: ElOptions | string, callback?: (el: StandInElement) => void): StandInElement {
    const el = new StandInElement(tag, o);
    this.appendChild(el);
    callback?.(el);
    return el;
  }
  createDiv(o?: ElOptions | string, callback?: (el: StandInElement) => void): StandInElement {
    return this.createEl("div", o, callback);
  }
  createSpan(o?: ElOptions | string, callback?: (el: StandInElement) => void): StandInElement {
    return this.createEl("span", o, callback);
  }
  appendChild<T extends StandInElement>(el: T): T {
    el.parent?.children.splice(el.parent.children.indexOf(el), 1);
    el.parent = this;
    this.children.push(el);
    return el;
  }
  append(...nodes: (StandInElement | string)[]): void {
    for (const n of nodes) typeof n === "string" ? this.appendText(n) : this.appendChild(n);
  }
  appendText(text: string): void {
    this.createEl("#text", { text });
  }
  remove(): void {
    this.detach();
  }
  detach(): void {
    if (this.parent) this.parent.children.splice(this.parent.children.indexOf(this), 1);
    this.parent = null;
  }
  empty(): void {
    for (const c of this.children.splice(0)) c.parent = null;
    this.ownText = "";
  }
  /** Test helper: every text set with `setText`, oldest first. */
  readonly textHistory: string[] = [];
  setText(text: string): void {
    this.empty();
    this.ownText = text;
    this.textHistory.push(text);
  }
  getText(): string {
    return this.textContent;
  }
  get textContent(): string {
    return this.ownText + this.children.map((c) => c.textContent).join("");
  }
  set textContent(t: string) {
    this.setText(t);
  }
  get innerText(): string {
    return this.textContent;
  }
  addClass(...cls: string[]): void {
    for (const c of cls) if (c) this.classes.add(c);
  }
  removeClass(...cls: string[]): void {
    for (const c of cls) this.classes.delete(c);
  }
  toggleClass(cls: string, value: boolean): void {
    if (value) this.classes.add(cls);
    else this.classes.delete(cls);
  }
  hasClass(cls: string): boolean {
    return this.classes.has(cls);
  }
  setAttr(k: string, v: string | number | boolean | null): void {
    if (v === null) delete this.attrs[k];
    else this.attrs[k] = String(v);
  }
  setAttribute(k: string, v: string): void {
    this.attrs[k] = v;
  }
  getAttr(k: string): string | null {
    return this.attrs[k] ?? null;
  }
  getAttribute(k: string): string | null {
    return this.getAttr(k);
  }
  addEventListener(type: string, fn: (ev: unknown) => unknown): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
  }
  removeEventListener(type: string, fn: (ev: unknown) => unknown): void {
    this.listeners.set(type, (this.listeners.get(type) ?? []).filter((f) => f !== fn));
  }
  /** Test helper: calls the listeners of `type`; returns their results. */
  dispatch(type: string, ev: unknown = {}): unknown[] {
    return (this.listeners.get(type) ?? []).map((f) => f(ev));
  }
  /** Test helper: every descendant (depth first). */
  descendants(): StandInElement[] {
    return this.children.flatMap((c) => [c, ...c.descendants()]);
  }
}

// ---------------------------------------------------------------------------------------------
// Settings UI

export abstract class BaseComponent {
  disabled = false;
  then(cb: (component: this) => unknown): this {
    cb(this);
    return this;
  }
  setDisabled(disabled: boolean): this {
    this.disabled = disabled;
    return this;
  }
}

export abstract class ValueComponent<T> extends BaseComponent {
  protected changeHandlers: ((value: T) => unknown)[] = [];
  abstract getValue(): T;
  abstract setValue(value: T): this;
  onChange(callback: (value: T) => unknown): this {
    this.changeHandlers.push(callback);
    return this;
  }
  /** Test helper: sets the value as a user would and runs the change handlers (awaiting them). */
  async simulateChange(value: T): Promise<void> {
    this.setValue(value);
    for (const h of this.changeHandlers) await h(value);
  }
}

export class ToggleComponent extends ValueComponent<boolean> {
  toggleEl: StandInElement;
  constructor(containerEl: StandInElement) {
    super();
    this.toggleEl = containerEl.createDiv("checkbox-container");
  }
  getValue(): boolean {
    return this.toggleEl.checked;
  }
  setValue(on: boolean): this {
    this.toggleEl.checked = on;
    this.toggleEl.toggleClass("is-enabled", on);
    return this;
  }
  setTooltip(tooltip: string): this {
    this.toggleEl.setAttr("aria-label", tooltip);
    return this;
  }
  onClick(): void {
    void this.simulateChange(!this.getValue());
  }
}

export class AbstractTextComponent extends ValueComponent<string> {
  constructor(public inputEl: StandInElement) {
    super();
  }
  getValue(): string {
    return this.inputEl.value;
  }
  setValue(value: string): this {
    this.inputEl.value = value;
    return this;
  }
  setPlaceholder(placeholder: string): this {
    this.inputEl.setAttr("placeholder", placeholder);
    return this;
  }
  onChanged(): void {
    for (const h of this.changeHandlers) void h(this.getValue());
  }
}

export class TextComponent extends AbstractTextComponent {
  constructor(containerEl: StandInElement) {
    super(containerEl.createEl("input", { type: "text" }));
  }
}

export class TextAreaComponent extends AbstractTextComponent {
  constructor(containerEl: StandInElement) {
    super(containerEl.createEl("textarea"));
  }
}

export class DropdownComponent extends ValueComponent<string> {
  selectEl: StandInElement;
  constructor(containerEl: StandInElement) {
    super();
    this.selectEl = containerEl.createEl("select", "dropdown");
  }
  addOption(value: string, display: string): this {
    this.selectEl.createEl("option", { value, text: display });
    return this;
  }
  addOptions(options: Record<string, string>): this {
    for (const [value, display] of Object.entries(options)) this.addOption(value, display);
    return this;
  }
  /** Test helper: the option values, in order. */
  get options(): string[] {
    return this.selectEl.children.map((o) => o.value);
  }
  getValue(): string {
    return this.selectEl.value;
  }
  setValue(value: string): this {
    this.selectEl.value = value;
    return this;
  }
}

export class ButtonComponent extends BaseComponent {
  buttonEl: StandInElement;
  private handlers: ((evt: unknown) => unknown)[] = [];
  constructor(containerEl: StandInElement) {
    super();
    this.buttonEl = containerEl.createEl("button");
  }
  setButtonText(name: string): this {
    this.buttonEl.setText(name);
    return this;
  }
  setCta(): this {
    this.buttonEl.addClass("mod-cta");
    return this;
  }
  removeCta(): this {
    this.buttonEl.removeClass("mod-cta");
    return this;
  }
  setWarning(): this {
    this.buttonEl.addClass("mod-warning");
    return this;
  }
  setTooltip(tooltip: string): this {
    this.buttonEl.setAttr("aria-label", tooltip);
    return this;
  }
  setIcon(icon: string): this {
    this.buttonEl.setAttr("data-icon", icon);
    return this;
  }
  setClass(cls: string): this {
    this.buttonEl.addClass(cls);
    return this;
  }
  onClick(callback: (evt: unknown) => unknown): this {
    this.handlers.push(callback);
    return this;
  }
  /** Test helper: clicks the button and awaits the handlers. */
  async click(): Promise<void> {
    for (const h of this.handlers) await h({});
  }
}

export class ExtraButtonComponent extends ButtonComponent {}

export class Setting {
  settingEl: StandInElement;
  infoEl: StandInElement;
  nameEl: StandInElement;
  descEl: StandInElement;
  controlEl: StandInElement;
  components: BaseComponent[] = [];
  errorEl: StandInElement | null = null;
  isHeading = false;
  constructor(containerEl: StandInElement) {
    this.settingEl = containerEl.createDiv("setting-item");
    this.infoEl = this.settingEl.createDiv("setting-item-info");
    this.nameEl = this.infoEl.createDiv("setting-item-name");
    this.descEl = this.infoEl.createDiv("setting-item-description");
    this.controlEl = this.settingEl.createDiv("setting-item-control");
    (this.settingEl as StandInElement & { setting?: Setting }).setting = this;
  }
  setName(name: string | StandInElement): this {
    this.nameEl.empty();
    this.nameEl.append(name);
    return this;
  }
  setDesc(desc: string | StandInElement): this {
    this.descEl.empty();
    this.descEl.append(desc);
    return this;
  }
  setClass(cls: string): this {
    this.settingEl.addClass(cls);
    return this;
  }
  setTooltip(tooltip: string): this {
    this.settingEl.setAttr("aria-label", tooltip);
    return this;
  }
  setHeading(): this {
    this.isHeading = true;
    this.settingEl.addClass("setting-item-heading");
    return this;
  }
  setDisabled(disabled: boolean): this {
    for (const c of this.components) c.setDisabled(disabled);
    return this;
  }
  setErrorMessage(message: string | null): this {
    if (message === null) {
      this.errorEl?.remove();
      this.errorEl = null;
    } else {
      this.errorEl ??= this.infoEl.createDiv("setting-item-error");
      this.errorEl.setText(message);
    }
    return this;
  }
  private add<T extends BaseComponent>(c: T, cb: (c: T) => unknown): this {
    this.components.push(c);
    cb(c);
    return this;
  }
  addButton(cb: (component: ButtonComponent) => unknown): this {
    return this.add(new ButtonComponent(this.controlEl), cb);
  }
  addExtraButton(cb: (component: ExtraButtonComponent) => unknown): this {
    return this.add(new ExtraButtonComponent(this.controlEl), cb);
  }
  addToggle(cb: (component: ToggleComponent) => unknown): this {
    return this.add(new ToggleComponent(this.controlEl), cb);
  }
  addText(cb: (component: TextComponent) => unknown): this {
    return this.add(new TextComponent(this.controlEl), cb);
  }
  addTextArea(cb: (component: TextAreaComponent) => unknown): this {
    return this.add(new TextAreaComponent(this.controlEl), cb);
  }
  addDropdown(cb: (component: DropdownComponent) => unknown): this {
    return this.add(new DropdownComponent(this.controlEl), cb);
  }
  then(cb: (setting: this) => unknown): this {
    cb(this);
    return this;
  }
  clear(): this {
    this.controlEl.empty();
    this.components = [];
    return this;
  }
}

/** Test helper: the `Setting`s rendered into a container, in order. */
export function settingsIn(containerEl: StandInElement): Setting[] {
  return containerEl
    .descendants()
    .map((el) => (el as StandInElement & { setting?: Setting }).setting)
    .filter((s): s is Setting => s !== undefined);
}

/**
 * The Obsidian version the stand-in plays (`apiVersion`, `requireApiVersion`). From 1.13.0 a setting
 * tab is drawn from `getSettingDefinitions()` when that returns items (`openSettingTab`), and
 * `addSettingTab` indexes the definitions for the settings search (`searchSettings`); before, only
 * `display()` exists for Obsidian to call. Tests set it with `setApiVersion` and restore it.
 */
export let apiVersion = "1.13.1";
export function setApiVersion(version: string): void {
  apiVersion = version;
}
export function requireApiVersion(version: string): boolean {
  const a = apiVersion.split(".").map(Number);
  const b = version.split(".").map(Number);
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

/** The declarative settings API's shapes (obsidian.d.ts, 1.13), as loosely as the stand-in needs them. */
interface DefinitionLike {
  type?: "group" | "list" | "page";
  name?: string;
  heading?: string;
  desc?: string;
  aliases?: string[];
  searchable?: boolean | (() => boolean);
  visible?: boolean | (() => boolean);
  disabled?: boolean | (() => boolean);
  items?: DefinitionLike[];
  control?: { type: string; key: string; options?: Record<string, string>; placeholder?: string; defaultValue?: unknown };
  render?: (setting: Setting, group: unknown) => unknown;
  action?: (el: StandInElement, index: number) => void;
}

const flag = (v: boolean | (() => boolean) | undefined, dflt: boolean): boolean => (v === undefined ? dflt : typeof v === "function" ? v() : v);

export abstract class SettingTab {
  containerEl = new StandInElement("div", "vertical-tab-content");
  /** Populated by update() (1.13+). */
  settingItems: DefinitionLike[] = [];
  /** Test helper: the tab was last drawn from its definitions (update() redraws it then). */
  drawnFromDefinitions = false;
  constructor(public app: App) {}
  display(): void {}
  hide(): void {
    this.containerEl.empty();
    this.drawnFromDefinitions = false;
  }
  getSettingDefinitions(): DefinitionLike[] {
    return [];
  }
  update(): void {
    if (!requireApiVersion("1.13.0")) throw new Error("SettingTab.update() does not exist before Obsidian 1.13.0");
    this.settingItems = this.getSettingDefinitions();
    if (this.drawnFromDefinitions) this.drawDefinitions();
  }
  refreshDomState(): void {
    if (this.drawnFromDefinitions) this.drawDefinitions();
  }
  getControlValue(_key: string): unknown {
    return undefined;
  }
  setControlValue(_key: string, _value: unknown): void | Promise<void> {}

  /** Draws `settingItems` as Obsidian 1.13 does: a heading per group, a `Setting` per visible item. */
  drawDefinitions(): void {
    const el = this.containerEl;
    el.empty();
    this.drawnFromDefinitions = true;
    const drawItems = (items: DefinitionLike[]) => {
      items.forEach((item, index) => {
        if (!flag(item.visible, true)) return;
        if (item.type === "group" || item.type === "list") {
          if (item.heading) new Setting(el).setName(item.heading).setHeading();
          drawItems(item.items ?? []);
          return;
        }
        const setting = new Setting(el).setName(item.name ?? "");
        if (item.desc) setting.setDesc(item.desc);
        if (item.type === "page") return;
        if (item.render) item.render(setting, { listEl: el });
        else if (item.action) setting.settingEl.addEventListener("click", () => item.action!(setting.settingEl, index));
        else if (item.control) this.drawControl(setting, item.control);
        if (flag(item.disabled, false)) setting.setDisabled(true);
      });
    };
    drawItems(this.settingItems);
  }

  private drawControl(setting: Setting, control: NonNullable<DefinitionLike["control"]>): void {
    const raw = this.getControlValue(control.key) ?? control.defaultValue;
    const value = typeof raw === "string" || typeof raw === "number" || typeof raw === "boolean" ? raw : "";
    const save = (v: unknown) => this.setControlValue(control.key, v);
    if (control.type === "toggle") setting.addToggle((t) => t.setValue(Boolean(value)).onChange(save));
    else if (control.type === "dropdown") setting.addDropdown((d) => d.addOptions(control.options ?? {}).setValue(String(value)).onChange(save));
    else if (control.type === "textarea") setting.addTextArea((t) => t.setPlaceholder(control.placeholder ?? "").setValue(String(value)).onChange(save));
    else setting.addText((t) => t.setPlaceholder(control.placeholder ?? "").setValue(String(value)).onChange((v) => save(control.type === "number" ? Number(v) : v)));
  }
}

export abstract class PluginSettingTab extends SettingTab {
  constructor(
    app: App,
    public plugin: Plugin,
  ) {
    super(app);
  }
  override getControlValue(key: string): unknown {
    return (this.plugin as unknown as { settings?: Record<string, unknown> }).settings?.[key];
  }
  override async setControlValue(key: string, value: unknown): Promise<void> {
    const settings = (this.plugin as unknown as { settings?: Record<string, unknown> }).settings;
    if (!settings) return;
    settings[key] = value;
    await this.plugin.saveData(settings);
  }
}

/** Test helper: opens a setting tab as the Obsidian of `apiVersion` does. */
export function openSettingTab(tab: SettingTab): "definitions" | "display" {
  if (requireApiVersion("1.13.0")) {
    tab.update();
    if (tab.settingItems.length > 0) {
      tab.drawDefinitions();
      return "definitions";
    }
  }
  tab.display();
  return "display";
}

/**
 * Test helper: Obsidian 1.13's settings search over a tab's indexed definitions: the names of the
 * visible, searchable items whose name, description or aliases hold every word of the query.
 */
export function searchSettings(tab: SettingTab, query: string): string[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const found: string[] = [];
  const walk = (items: DefinitionLike[]) => {
    for (const item of items) {
      if (!flag(item.visible, true)) continue;
      if (item.type === "group" || item.type === "list" || (item.type === "page" && item.items)) walk(item.items ?? []);
      if (item.type === "group" || item.type === "list" || !flag(item.searchable, true)) continue;
      const text = [item.name ?? "", item.desc ?? "", ...(item.aliases ?? [])].join(" ").toLowerCase();
      if (words.every((w) => text.includes(w))) found.push(item.name ?? "");
    }
  };
  walk(tab.settingItems);
  return found;
}

export class Modal {
  /** Test helper: every modal opened, oldest first. */
  static opened: Modal[] = [];
  containerEl = new StandInElement("div", "modal-container");
  modalEl = this.containerEl.createDiv("modal");
  titleEl = this.modalEl.createDiv("modal-title");
  contentEl = this.modalEl.createDiv("modal-content");
  isOpen = false;
  constructor(public app: App) {}
  open(): void {
    this.isOpen = true;
    Modal.opened.push(this);
    this.onOpen();
  }
  close(): void {
    this.isOpen = false;
    this.onClose();
  }
  onOpen(): void {}
  onClose(): void {}
  setTitle(title: string): this {
    this.titleEl.setText(title);
    return this;
  }
  setContent(content: string): this {
    this.contentEl.setText(content);
    return this;
  }
}

export class Notice {
  /** Every notice shown since the last `Notice.messages.length = 0`, oldest first. */
  static messages: string[] = [];
  noticeEl = new StandInElement("div", "notice");
  containerEl = this.noticeEl;
  messageEl = this.noticeEl;
  constructor(
    message: string | StandInElement,
    public duration?: number,
  ) {
    this.setMessage(message);
  }
  setMessage(message: string | StandInElement): this {
    const text = typeof message === "string" ? message : message.textContent;
    this.messageEl.setText(text);
    Notice.messages.push(text);
    return this;
  }
  hide(): void {}
}

// ---------------------------------------------------------------------------------------------
// Files and the vault

export abstract class TAbstractFile {
  parent: TFolder | null = null;
  constructor(
    public vault: Vault,
    public path: string,
  ) {}
  get name(): string {
    return this.path === "/" ? "" : this.path.slice(this.path.lastIndexOf("/") + 1);
  }
}

export interface FileStats {
  ctime: number;
  mtime: number;
  size: number;
}

export class TFile extends TAbstractFile {
  stat: FileStats = { ctime: 0, mtime: 0, size: 0 };
  get basename(): string {
    const dot = this.name.lastIndexOf(".");
    return dot > 0 ? this.name.slice(0, dot) : this.name;
  }
  get extension(): string {
    const dot = this.name.lastIndexOf(".");
    return dot > 0 ? this.name.slice(dot + 1) : "";
  }
}

export class TFolder extends TAbstractFile {
  children: TAbstractFile[] = [];
  isRoot(): boolean {
    return this.path === "/";
  }
}

export interface Stat {
  type: "file" | "folder";
  ctime: number;
  mtime: number;
  size: number;
}

const hiddenName = (name: string) => name.startsWith(".");

/** `vault.adapter`: raw file access by vault-relative path (Obsidian's FileSystemAdapter). */
export class FileSystemAdapter {
  constructor(private readonly root: string) {}
  getName(): string {
    return nodePath.basename(this.root);
  }
  getBasePath(): string {
    return this.root;
  }
  getFullPath(p: string): string {
    return this.abs(p);
  }
  private abs(p: string): string {
    const n = normalizePath(p);
    return n === "/" ? this.root : nodePath.join(this.root, ...n.split("/"));
  }
  async exists(p: string): Promise<boolean> {
    return fs.existsSync(this.abs(p));
  }
  async stat(p: string): Promise<Stat | null> {
    try {
      const s = await fs.promises.stat(this.abs(p));
      return { type: s.isDirectory() ? "folder" : "file", ctime: s.birthtimeMs || s.ctimeMs, mtime: s.mtimeMs, size: s.size };
    } catch {
      return null;
    }
  }
  async list(p: string): Promise<{ files: string[]; folders: string[] }> {
    const base = normalizePath(p) === "/" ? "" : normalizePath(p) + "/";
    const out = { files: [] as string[], folders: [] as string[] };
    for (const e of await fs.promises.readdir(this.abs(p), { withFileTypes: true })) (e.isDirectory() ? out.folders : out.files).push(base + e.name);
    return out;
  }
  async read(p: string): Promise<string> {
    return fs.promises.readFile(this.abs(p), "utf8");
  }
  async readBinary(p: string): Promise<ArrayBuffer> {
    const b = await fs.promises.readFile(this.abs(p));
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  }
  async write(p: string, data: string): Promise<void> {
    await fs.promises.mkdir(nodePath.dirname(this.abs(p)), { recursive: true });
    await fs.promises.writeFile(this.abs(p), data, "utf8");
  }
  async writeBinary(p: string, data: ArrayBuffer): Promise<void> {
    await fs.promises.mkdir(nodePath.dirname(this.abs(p)), { recursive: true });
    await fs.promises.writeFile(this.abs(p), new Uint8Array(data));
  }
  async append(p: string, data: string): Promise<void> {
    await fs.promises.mkdir(nodePath.dirname(this.abs(p)), { recursive: true });
    await fs.promises.appendFile(this.abs(p), data, "utf8");
  }
  async process(p: string, fn: (data: string) => string): Promise<string> {
    const out = fn(await this.read(p));
    await this.write(p, out);
    return out;
  }
  async mkdir(p: string): Promise<void> {
    await fs.promises.mkdir(this.abs(p), { recursive: true });
  }
  async remove(p: string): Promise<void> {
    await fs.promises.unlink(this.abs(p));
  }
  async rmdir(p: string, recursive: boolean): Promise<void> {
    await fs.promises.rm(this.abs(p), { recursive, force: false });
  }
  /** Like Obsidian's adapter: refuses to overwrite an existing destination. */
  async rename(p: string, newPath: string): Promise<void> {
    if (fs.existsSync(this.abs(newPath)) && this.abs(p).toLowerCase() !== this.abs(newPath).toLowerCase()) {
      throw new Error("Destination file already exists!");
    }
    await fs.promises.rename(this.abs(p), this.abs(newPath));
  }
  async copy(p: string, newPath: string): Promise<void> {
    await fs.promises.copyFile(this.abs(p), this.abs(newPath));
  }
  async trashLocal(p: string): Promise<void> {
    const dest = nodePath.join(this.root, ".trash", nodePath.basename(this.abs(p)));
    await fs.promises.mkdir(nodePath.dirname(dest), { recursive: true });
    await fs.promises.rename(this.abs(p), dest);
  }
}

export interface TestAppOptions {
  /** The config folder name (default `.obsidian`). */
  configDir?: string;
  /** Values for `vault.getConfig` (e.g. `trashOption`: "system" | "local" | "none", `userIgnoreFilters`). */
  config?: Record<string, unknown>;
  /** The vault's name (default: the folder's name). */
  name?: string;
  /** Notice changes made by other programs (like Obsidian's file watcher); stop with `vault.stopWatching()`. */
  watch?: boolean;
  /** How long the watcher waits after a change before it looks (default 30 ms). */
  watchDelayMs?: number;
}

const DEFAULT_CONFIG: Record<string, unknown> = { trashOption: "system", userIgnoreFilters: null, alwaysUpdateLinks: true };

export class Vault extends Events {
  readonly adapter: FileSystemAdapter;
  readonly configDir: string;
  private readonly files = new Map<string, TAbstractFile>();
  private readonly root: TFolder;
  private systemTrash: string | null = null;
  /** Where "system trash" moves go (a temp folder outside the vault, made on first use). */
  get systemTrashDir(): string {
    return (this.systemTrash ??= fs.mkdtempSync(nodePath.join(os.tmpdir(), "stand-in-system-trash-")));
  }
  metadataCache!: MetadataCache;

  constructor(
    readonly basePath: string,
    private readonly opts: TestAppOptions = {},
  ) {
    super();
    this.adapter = new FileSystemAdapter(basePath);
    this.configDir = opts.configDir ?? ".obsidian";
    this.root = new TFolder(this, "/");
    this.files.set("/", this.root);
    this.scan("", this.root);
    if (opts.watch) this.startWatching();
  }

  private watcher: fs.FSWatcher | null = null;
  private syncTimer: ReturnType<typeof setTimeout> | null = null;

  private startWatching(): void {
    this.watcher = fs.watch(this.basePath, { recursive: true }, () => {
      if (this.syncTimer) clearTimeout(this.syncTimer);
      this.syncTimer = setTimeout(() => {
        this.syncTimer = null;
        this.syncFromDisk();
      }, this.opts.watchDelayMs ?? 30);
    });
    this.watcher.on("error", () => {});
  }

  /** Test helper: stops the watcher started by the `watch` option. */
  stopWatching(): void {
    if (this.syncTimer) clearTimeout(this.syncTimer);
    this.watcher?.close();
    this.watcher = null;
  }

  /** Brings the tree in line with the folder: what other programs created, changed or removed. */
  syncFromDisk(): void {
    if (!fs.existsSync(this.basePath)) return;
    const seen = new Set<string>(["/"]);
    const walk = (rel: string, folder: TFolder) => {
      for (const e of fs.readdirSync(this.abs(rel), { withFileTypes: true })) {
        if (hiddenName(e.name)) continue;
        const p = this.vaultName(rel, e.name);
        seen.add(p);
        const known = this.files.get(p);
        if (e.isDirectory()) {
          let f = known instanceof TFolder ? known : null;
          if (!f) {
            f = this.attach(new TFolder(this, p), folder) as TFolder;
            this.trigger("create", f);
          }
          walk(p, f);
        } else if (e.isFile()) {
          if (known instanceof TFile) {
            const before = { ...known.stat };
            this.refreshStat(known);
            if (known.stat.mtime !== before.mtime || known.stat.size !== before.size) this.modified(known, null);
          } else {
            const f = this.attach(new TFile(this, p), folder) as TFile;
            this.refreshStat(f);
            this.trigger("create", f);
            this.metadataCache.fileAdded(f, null);
          }
        }
      }
    };
    walk("", this.root);
    for (const [p, f] of [...this.files]) if (p !== "/" && !seen.has(p) && this.files.get(p) === f) this.removed(f);
  }

  /**
   * Like Obsidian, the vault indexes paths in NFC even where the disk stores another form (NFD names
   * from macOS); I/O goes to the name on disk. Only names that differ are remembered here.
   */
  private readonly diskNames = new Map<string, string>();

  private vaultName(rel: string, diskName: string): string {
    const name = diskName.normalize("NFC");
    const p = rel ? `${rel}/${name}` : name;
    if (name !== diskName) this.diskNames.set(p, diskName);
    return p;
  }

  /** The absolute path on disk of a vault path (test-only; Obsidian keeps this inside its adapter). */
  diskPath(p: string): string {
    if (p === "" || p === "/") return this.basePath;
    const i = p.lastIndexOf("/");
    return nodePath.join(this.diskPath(i < 0 ? "" : p.slice(0, i)), this.diskNames.get(p) ?? p.slice(i + 1));
  }

  private abs(p: string): string {
    return this.diskPath(p);
  }

  private scan(rel: string, folder: TFolder): void {
    for (const e of fs.readdirSync(this.abs(rel), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (hiddenName(e.name)) continue;
      const p = this.vaultName(rel, e.name);
      if (e.isDirectory()) {
        const f = this.attach(new TFolder(this, p), folder) as TFolder;
        this.scan(p, f);
      } else if (e.isFile()) {
        const f = this.attach(new TFile(this, p), folder) as TFile;
        this.refreshStat(f);
      }
    }
  }

  private attach(f: TAbstractFile, parent: TFolder): TAbstractFile {
    f.parent = parent;
    parent.children.push(f);
    this.files.set(f.path, f);
    return f;
  }

  private detachFile(f: TAbstractFile): void {
    if (f.parent) f.parent.children = f.parent.children.filter((c) => c !== f);
    f.parent = null;
    this.files.delete(f.path);
  }

  private refreshStat(f: TFile): void {
    const s = fs.statSync(this.abs(f.path));
    f.stat = { ctime: s.birthtimeMs || s.ctimeMs, mtime: s.mtimeMs, size: s.size };
  }

  getName(): string {
    return this.opts.name ?? nodePath.basename(this.basePath);
  }
  getConfig(key: string): unknown {
    return key in (this.opts.config ?? {}) ? this.opts.config![key] : DEFAULT_CONFIG[key];
  }
  /** Test helper: changes a config value (what the user would do in Obsidian's settings). */
  setConfig(key: string, value: unknown): void {
    (this.opts.config ??= {})[key] = value;
  }
  getRoot(): TFolder {
    return this.root;
  }
  getAbstractFileByPath(path: string): TAbstractFile | null {
    return this.files.get(normalizePath(path)) ?? null;
  }
  getFileByPath(path: string): TFile | null {
    const f = this.getAbstractFileByPath(path);
    return f instanceof TFile ? f : null;
  }
  getFolderByPath(path: string): TFolder | null {
    const f = this.getAbstractFileByPath(path);
    return f instanceof TFolder ? f : null;
  }
  getAllLoadedFiles(): TAbstractFile[] {
    return [...this.files.values()];
  }
  getAllFolders(includeRoot = false): TFolder[] {
    return [...this.files.values()].filter((f): f is TFolder => f instanceof TFolder && (includeRoot || !f.isRoot()));
  }
  getFiles(): TFile[] {
    return [...this.files.values()].filter((f): f is TFile => f instanceof TFile);
  }
  getMarkdownFiles(): TFile[] {
    return this.getFiles().filter((f) => f.extension === "md");
  }
  static recurseChildren(root: TFolder, cb: (file: TAbstractFile) => unknown): void {
    cb(root);
    for (const c of root.children) c instanceof TFolder ? Vault.recurseChildren(c, cb) : cb(c);
  }

  async read(file: TFile): Promise<string> {
    this.assertLoaded(file);
    return fs.promises.readFile(this.abs(file.path), "utf8");
  }
  cachedRead(file: TFile): Promise<string> {
    return this.read(file);
  }
  async readBinary(file: TFile): Promise<ArrayBuffer> {
    this.assertLoaded(file);
    return this.adapter.readBinary(file.path);
  }

  private assertLoaded(file: TAbstractFile): void {
    if (this.files.get(file.path) !== file) throw new Error(`File not found: ${file.path}`);
  }

  private parentForNew(path: string): TFolder {
    if (this.files.has(path) || fs.existsSync(this.abs(path))) throw new Error("File already exists.");
    const i = path.lastIndexOf("/");
    const parent = i < 0 ? this.root : this.getFolderByPath(path.slice(0, i));
    if (!parent) throw new Error(`Folder does not exist: ${path.slice(0, i)}`);
    return parent;
  }

  async create(path: string, data: string): Promise<TFile> {
    path = normalizePath(path);
    const parent = this.parentForNew(path);
    await fs.promises.writeFile(this.abs(path), data, { encoding: "utf8", flag: "wx" });
    return this.added(path, parent, data);
  }
  async createBinary(path: string, data: ArrayBuffer): Promise<TFile> {
    path = normalizePath(path);
    const parent = this.parentForNew(path);
    await fs.promises.writeFile(this.abs(path), new Uint8Array(data), { flag: "wx" });
    return this.added(path, parent, null);
  }
  private added(path: string, parent: TFolder, text: string | null): TFile {
    const f = this.attach(new TFile(this, path), parent) as TFile;
    this.refreshStat(f);
    this.trigger("create", f);
    this.metadataCache.fileAdded(f, text);
    return f;
  }
  async createFolder(path: string): Promise<TFolder> {
    path = normalizePath(path);
    if (this.files.has(path)) throw new Error("Folder already exists.");
    let parent = this.root;
    let sofar = "";
    for (const seg of path.split("/")) {
      sofar = sofar ? `${sofar}/${seg}` : seg;
      const existing = this.files.get(sofar);
      if (existing instanceof TFolder) {
        parent = existing;
        continue;
      }
      if (existing) throw new Error(`A file is in the way: ${sofar}`);
      await fs.promises.mkdir(this.abs(sofar), { recursive: true });
      parent = this.attach(new TFolder(this, sofar), parent) as TFolder;
      this.trigger("create", parent);
    }
    return parent;
  }
  async modify(file: TFile, data: string): Promise<void> {
    this.assertLoaded(file);
    await fs.promises.writeFile(this.abs(file.path), data, "utf8");
    this.modified(file, data);
  }
  async modifyBinary(file: TFile, data: ArrayBuffer): Promise<void> {
    this.assertLoaded(file);
    await fs.promises.writeFile(this.abs(file.path), new Uint8Array(data));
    this.modified(file, null);
  }
  async append(file: TFile, data: string): Promise<void> {
    this.assertLoaded(file);
    await fs.promises.appendFile(this.abs(file.path), data, "utf8");
    this.modified(file, null);
  }
  async process(file: TFile, fn: (data: string) => string): Promise<string> {
    this.assertLoaded(file);
    const current = fs.readFileSync(this.abs(file.path), "utf8");
    const next = fn(current);
    if (next !== current) {
      fs.writeFileSync(this.abs(file.path), next, "utf8");
      this.modified(file, next);
    }
    return next;
  }
  private modified(file: TFile, text: string | null): void {
    this.refreshStat(file);
    this.trigger("modify", file);
    this.metadataCache.fileChanged(file, text);
  }
  async rename(file: TAbstractFile, newPath: string): Promise<void> {
    this.assertLoaded(file);
    newPath = normalizePath(newPath);
    const i = newPath.lastIndexOf("/");
    const parent = i < 0 ? this.root : this.getFolderByPath(newPath.slice(0, i));
    if (!parent) throw new Error(`Folder does not exist: ${newPath.slice(0, i)}`);
    const sameIgnoringCase = newPath.toLowerCase() === file.path.toLowerCase();
    if ((this.files.has(newPath) || fs.existsSync(this.abs(newPath))) && !sameIgnoringCase) throw new Error("Destination file already exists!");
    await fs.promises.rename(this.abs(file.path), this.abs(newPath));
    const moved: [TAbstractFile, string][] = [];
    const oldBase = file.path;
    const walk = (f: TAbstractFile) => {
      moved.push([f, f.path]);
      if (f instanceof TFolder) f.children.forEach(walk);
    };
    walk(file);
    for (const [f] of moved) this.files.delete(f.path);
    this.detachFile(file);
    for (const [f, old] of moved) f.path = newPath + old.slice(oldBase.length);
    for (const [f] of moved) this.files.set(f.path, f);
    file.parent = parent;
    parent.children.push(file);
    for (const [f, old] of moved) this.trigger("rename", f, old);
    this.metadataCache.filesRenamed(moved.filter(([f]) => f instanceof TFile).map(([f, old]) => [f as TFile, old]));
  }
  async delete(file: TAbstractFile, force?: boolean): Promise<void> {
    this.assertLoaded(file);
    if (file instanceof TFolder && file.children.length && !force) throw new Error("Folder is not empty.");
    await fs.promises.rm(this.abs(file.path), { recursive: true });
    this.removed(file);
  }
  /** Moves to the system trash (here: a temp folder outside the vault) or to the vault's `.trash`. */
  async trash(file: TAbstractFile, system: boolean): Promise<void> {
    this.assertLoaded(file);
    const destDir = system ? this.systemTrashDir : nodePath.join(this.basePath, ".trash");
    await fs.promises.mkdir(destDir, { recursive: true });
    let dest = nodePath.join(destDir, file.name);
    for (let n = 1; fs.existsSync(dest); n++) dest = nodePath.join(destDir, `${file.name} ${n}`);
    await fs.promises.rename(this.abs(file.path), dest);
    this.removed(file);
  }
  private removed(file: TAbstractFile): void {
    const all: TAbstractFile[] = [];
    const walk = (f: TAbstractFile) => {
      if (f instanceof TFolder) f.children.forEach(walk);
      all.push(f);
    };
    walk(file);
    this.detachFile(file);
    for (const f of all) this.files.delete(f.path);
    for (const f of all) this.trigger("delete", f);
    this.metadataCache.filesDeleted(all.filter((f): f is TFile => f instanceof TFile));
  }
}

// ---------------------------------------------------------------------------------------------
// Metadata

/** The `CachedMetadata` shape: like Obsidian, empty lists are left out. */
export type CachedMetadata = Partial<Omit<NoteMetadata, "frontmatterError">>;

function toCached(meta: NoteMetadata): CachedMetadata {
  const c: CachedMetadata = {};
  if (meta.links.length) c.links = meta.links;
  if (meta.embeds.length) c.embeds = meta.embeds;
  if (meta.tags.length) c.tags = meta.tags;
  if (meta.headings.length) c.headings = meta.headings;
  if (meta.frontmatterLinks.length) c.frontmatterLinks = meta.frontmatterLinks;
  if (Object.keys(meta.blocks).length) c.blocks = meta.blocks;
  if (meta.frontmatter) c.frontmatter = meta.frontmatter;
  if (meta.frontmatterPosition) c.frontmatterPosition = meta.frontmatterPosition;
  return c;
}

export class MetadataCache extends Events {
  resolvedLinks: Record<string, Record<string, number>> = {};
  unresolvedLinks: Record<string, Record<string, number>> = {};
  /** Internal in Obsidian (not in the public types): true once every file has been indexed. */
  resolved = false;
  private readonly metas = new Map<string, NoteMetadata>();
  private readonly caches = new Map<string, CachedMetadata>();
  private resolver: LinkResolver;

  constructor(private readonly vault: Vault) {
    super();
    this.resolver = new LinkResolver(vault.getFiles().map((f) => f.path));
    for (const f of vault.getMarkdownFiles()) this.index(f, fs.readFileSync(vault.diskPath(f.path), "utf8"), false);
    this.recompute(false);
    setTimeout(() => {
      this.resolved = true;
      this.trigger("resolved");
    }, 0);
  }

  private index(file: TFile, text: string, notify = true): void {
    const meta = parseNote(text);
    this.metas.set(file.path, meta);
    const cache = toCached(meta);
    this.caches.set(file.path, cache);
    if (notify) this.trigger("changed", file, text, cache);
  }

  private recompute(notify = true): void {
    const { resolved, unresolved } = computeLinkMaps(this.metas.entries(), this.resolver);
    this.resolvedLinks = resolved;
    this.unresolvedLinks = unresolved;
    if (notify && this.resolved) this.trigger("resolved");
  }

  /** @internal vault → cache */
  fileAdded(file: TFile, text: string | null): void {
    this.resolver.add(file.path);
    if (file.extension === "md") this.index(file, text ?? fs.readFileSync(this.vault.diskPath(file.path), "utf8"));
    this.recompute();
  }
  /** @internal */
  fileChanged(file: TFile, text: string | null): void {
    if (file.extension === "md") this.index(file, text ?? fs.readFileSync(this.vault.diskPath(file.path), "utf8"));
    this.recompute();
  }
  /** @internal */
  filesRenamed(moves: [TFile, string][]): void {
    for (const [f, old] of moves) {
      this.resolver.remove(old);
      this.resolver.add(f.path);
      const meta = this.metas.get(old);
      const cache = this.caches.get(old);
      this.metas.delete(old);
      this.caches.delete(old);
      if (meta && cache) {
        this.metas.set(f.path, meta);
        this.caches.set(f.path, cache);
      }
    }
    this.recompute();
  }
  /** @internal */
  filesDeleted(files: TFile[]): void {
    for (const f of files) {
      this.resolver.remove(f.path);
      const prev = this.caches.get(f.path) ?? null;
      this.metas.delete(f.path);
      this.caches.delete(f.path);
      if (f.extension === "md") this.trigger("deleted", f, prev);
    }
    this.recompute();
  }

  getFileCache(file: TFile): CachedMetadata | null {
    return this.caches.get(file.path) ?? null;
  }
  getCache(path: string): CachedMetadata | null {
    return this.caches.get(path) ?? null;
  }
  getFirstLinkpathDest(linkpath: string, sourcePath: string): TFile | null {
    const p = this.resolver.resolve(linkpath, sourcePath);
    return p === null ? null : this.vault.getFileByPath(p);
  }
  fileToLinktext(file: TFile, sourcePath: string, omitMdExtension = true): string {
    const short = shortestLinkpath(file.path, sourcePath, this.resolver);
    return !omitMdExtension && file.extension === "md" ? `${short}.md` : short;
  }
  /** @internal the resolver as it is now (the file manager's link rewriting needs it). */
  currentResolver(): LinkResolver {
    return this.resolver;
  }
  /** Test helper: the parsed metadata as our core type. */
  noteMetadata(path: string): NoteMetadata | null {
    return this.metas.get(path) ?? null;
  }
}

// ---------------------------------------------------------------------------------------------
// File manager, workspace, app, plugin

export class FileManager {
  constructor(private readonly app: App) {}

  /** Moves the file, then rewrites every link that pointed to it (Obsidian with "Automatically update internal links" on). */
  async renameFile(file: TAbstractFile, newPath: string): Promise<void> {
    const { vault, metadataCache } = this.app;
    newPath = normalizePath(newPath);
    const renames = new Map<string, string>();
    const collect = (f: TAbstractFile) => {
      if (f instanceof TFile) renames.set(f.path, newPath + f.path.slice(file.path.length));
      if (f instanceof TFolder) f.children.forEach(collect);
    };
    collect(file);
    const before = new LinkResolver(metadataCache.currentResolver().paths());
    const { resolveOld, resolveNewShortest } = renameContext(before, renames);
    // Notes whose links point to a moved file, with their metadata from before the move.
    const sources: [string, NoteMetadata][] = [];
    for (const [source, targets] of Object.entries(metadataCache.resolvedLinks)) {
      const meta = metadataCache.noteMetadata(source);
      if (meta && (Object.keys(targets).some((t) => renames.has(t)) || renames.has(source))) sources.push([source, meta]);
    }
    await vault.rename(file, newPath);
    if (vault.getConfig("alwaysUpdateLinks") === false) return;
    for (const [oldSource, meta] of sources) {
      const newSource = renames.get(oldSource) ?? oldSource;
      const f = vault.getFileByPath(newSource);
      if (!f) continue;
      await vault.process(f, (text) => rewriteLinks(text, meta, oldSource, newSource, renames, resolveOld, resolveNewShortest).text);
    }
  }

  /** Parses the frontmatter, lets `fn` change it, and writes it back leaving the body byte for byte. */
  async processFrontMatter(file: TFile, fn: (frontmatter: Record<string, unknown>) => void): Promise<void> {
    await this.app.vault.process(file, (text) => {
      const split = splitFrontmatter(text);
      const fm = split.yaml !== null ? ((parseDocument(split.yaml).toJS() as Record<string, unknown> | null) ?? {}) : {};
      if (split.yaml !== null) {
        const doc = parseDocument(split.yaml);
        if (doc.errors.length) throw new Error(`Failed to parse frontmatter: ${doc.errors[0].message}`);
      }
      fn(fm);
      const body = text.slice(split.bodyOffset);
      if (split.yaml === null && Object.keys(fm).length === 0) return text;
      const eol = text.includes("\r\n") ? "\r\n" : "\n";
      const yamlText = Object.keys(fm).length ? stringify(fm).replace(/\n/g, eol) : "";
      return `---${eol}${yamlText}---${eol}${body}`;
    });
  }

  /** Honours the user's "Deleted files" setting (`trashOption`: system / local / none). */
  async trashFile(file: TAbstractFile): Promise<void> {
    const option = this.app.vault.getConfig("trashOption");
    if (option === "none") await this.app.vault.delete(file, true);
    else await this.app.vault.trash(file, option !== "local");
  }
}

/** A fake editor: the selection and cursor a test sets. */
export class Editor {
  selection = "";
  cursor = { line: 0, ch: 0 };
  getSelection(): string {
    return this.selection;
  }
  getCursor(): { line: number; ch: number } {
    return this.cursor;
  }
}

export abstract class View extends Component {
  containerEl = new StandInElement("div", "view-content");
  constructor(public leaf: WorkspaceLeaf) {
    super();
  }
  abstract getViewType(): string;
}

export class MarkdownView extends View {
  file: TFile | null = null;
  editor = new Editor();
  /** Test helper: "source" (editing) or "preview" (reading view). */
  mode: "source" | "preview" = "source";
  getViewType(): string {
    return "markdown";
  }
  getMode(): "source" | "preview" {
    return this.mode;
  }
}

export class WorkspaceLeaf extends Events {
  view: View;
  /** Test helper: the state passed to the last `openFile`. */
  lastOpenState: unknown = null;
  constructor(private readonly workspace: Workspace) {
    super();
    this.view = new MarkdownView(this);
  }
  async openFile(file: TFile, openState?: { active?: boolean; eState?: unknown }): Promise<void> {
    const view = this.view instanceof MarkdownView ? this.view : new MarkdownView(this);
    this.view = view;
    view.file = file;
    this.lastOpenState = openState ?? null;
    if (openState?.active) this.workspace.setActiveLeaf(this);
  }
  getViewState(): { type: string } {
    return { type: this.view.getViewType() };
  }
}

export class Workspace extends Events {
  layoutReady = false;
  /** The workspace's element, in the main window. */
  containerEl = new StandInElement("div");
  /** Test helper: what `getActiveFile` returns (defaults to the active leaf's file). */
  activeFile: TFile | null = null;
  /** Test helper: the leaves in the main area, in order. */
  leaves: WorkspaceLeaf[] = [];
  activeLeaf: WorkspaceLeaf | null = null;
  /** Test helper: the leaf that had focus last, even when a side panel has it now. */
  mostRecentLeaf: WorkspaceLeaf | null = null;
  onLayoutReady(callback: () => unknown): void {
    setTimeout(() => {
      this.layoutReady = true;
      callback();
    }, 0);
  }
  getActiveFile(): TFile | null {
    if (this.activeFile) return this.activeFile;
    const v = this.activeLeaf?.view;
    return v instanceof MarkdownView ? v.file : null;
  }
  getActiveViewOfType<T>(type: abstract new (...args: never[]) => T): T | null {
    const v = this.activeLeaf?.view;
    return v instanceof type ? v : null;
  }
  getMostRecentLeaf(): WorkspaceLeaf | null {
    return this.mostRecentLeaf;
  }
  getLeavesOfType(viewType: string): WorkspaceLeaf[] {
    return this.leaves.filter((l) => l.view.getViewType() === viewType);
  }
  getLeaf(newLeaf?: boolean | "tab" | "split" | "window"): WorkspaceLeaf {
    if (!newLeaf && this.mostRecentLeaf) return this.mostRecentLeaf;
    const leaf = new WorkspaceLeaf(this);
    this.leaves.push(leaf);
    this.mostRecentLeaf ??= leaf;
    return leaf;
  }
  /** Sets focus to a leaf (null: focus in a side panel). */
  setActiveLeaf(leaf: WorkspaceLeaf | null): void {
    this.activeLeaf = leaf;
    if (leaf) this.mostRecentLeaf = leaf;
  }
}

export interface Command {
  id: string;
  name: string;
  icon?: string;
  callback?: () => unknown;
  checkCallback?: (checking: boolean) => boolean | void;
}

export class App {
  vault: Vault;
  metadataCache: MetadataCache;
  fileManager: FileManager;
  workspace = new Workspace();
  /** Obsidian's internal command registry, enough for tests to run commands by id. */
  commands = {
    commands: {} as Record<string, Command>,
    executeCommandById: (id: string): boolean => {
      const c = this.commands.commands[id];
      if (!c) return false;
      if (c.checkCallback) return c.checkCallback(false) !== false;
      void c.callback?.();
      return true;
    },
  };
  constructor(root: string, opts: TestAppOptions = {}) {
    this.vault = new Vault(root, opts);
    this.metadataCache = new MetadataCache(this.vault);
    this.vault.metadataCache = this.metadataCache;
    this.fileManager = new FileManager(this);
  }
}

export interface PluginManifest {
  dir?: string;
  id: string;
  name: string;
  author: string;
  version: string;
  minAppVersion: string;
  description: string;
  isDesktopOnly?: boolean;
}

export abstract class Plugin extends Component {
  /** Test helpers: what the plugin added. */
  readonly commands: Command[] = [];
  readonly statusBarItems: StandInElement[] = [];
  readonly settingTabs: PluginSettingTab[] = [];
  constructor(
    public app: App,
    public manifest: PluginManifest,
  ) {
    super();
    this.manifest.dir ??= `${app.vault.configDir}/plugins/${manifest.id}`;
  }
  private get dataPath(): string {
    return `${this.app.vault.configDir}/plugins/${this.manifest.id}/data.json`;
  }
  async loadData(): Promise<unknown> {
    if (!(await this.app.vault.adapter.exists(this.dataPath))) return null;
    return JSON.parse(await this.app.vault.adapter.read(this.dataPath));
  }
  async saveData(data: unknown): Promise<void> {
    await this.app.vault.adapter.write(this.dataPath, JSON.stringify(data, null, 2));
  }
  addCommand(command: Command): Command {
    const full = { ...command, id: `${this.manifest.id}:${command.id}` };
    this.commands.push(full);
    this.app.commands.commands[full.id] = full;
    this.register(() => delete this.app.commands.commands[full.id]);
    return full;
  }
  removeCommand(commandId: string): void {
    delete this.app.commands.commands[`${this.manifest.id}:${commandId}`];
  }
  addStatusBarItem(): StandInElement {
    const el = new StandInElement("div", "status-bar-item");
    this.statusBarItems.push(el);
    this.register(() => el.detach());
    return el;
  }
  addRibbonIcon(icon: string, title: string, callback: (evt: unknown) => unknown): StandInElement {
    const el = new StandInElement("div", { cls: "side-dock-ribbon-action", attr: { "aria-label": title, "data-icon": icon } });
    el.addEventListener("click", callback);
    return el;
  }
  addSettingTab(settingTab: PluginSettingTab): void {
    this.settingTabs.push(settingTab);
    // Obsidian 1.13+ indexes the tab's definitions for the settings search when it is added.
    if (requireApiVersion("1.13.0")) settingTab.update();
  }
}

/** Creates an `App` over a folder, plus a helper to instantiate a plugin class against it. */
export function createTestApp(
  root: string,
  opts: TestAppOptions = {},
): {
  app: App;
  createPlugin: <P extends Plugin>(PluginClass: new (app: App, manifest: PluginManifest) => P, manifest?: Partial<PluginManifest>) => P;
} {
  const app = new App(root, opts);
  const createPlugin = <P extends Plugin>(PluginClass: new (app: App, manifest: PluginManifest) => P, manifest: Partial<PluginManifest> = {}): P =>
    new PluginClass(app, {
      id: "vault-mcp",
      name: "Vault MCP",
      author: "tests",
      version: "0.1.0",
      minAppVersion: "1.6.6",
      description: "test",
      isDesktopOnly: true,
      ...manifest,
    });
  return { app, createPlugin };
}
