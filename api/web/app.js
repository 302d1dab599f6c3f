// The afasim manager page (docs/web.md): four views over the ReST API v1, no build step, no
// network beyond this server. Chart.js (Debian's libjs-chart.js) draws the performance view.
'use strict';

const API = '/api/v1';
const state = { view: 'physical', volumes: [], hosts: [], policies: [], lastEventId: 0, charts: {},
  auth: sessionStorage.getItem('afasim-auth') };
window.afasim = state;  // for the browser test and for the curious

// ---------------------------------------------------------------------------------------
// Plumbing

const $ = (sel, root = document) => root.querySelector(sel);
const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

// Every item of a collection, page by page (1,000 a page, the API's largest): the array
// holds 4,096 volumes, and one page of 1,000 left the rest out of the page without a word
// (hostile round 23). Returns {items, total}.
async function apiAll(path) {
  const items = [];
  let total = 0;
  do {
    const page = await api('GET', `${path}?limit=1000&offset=${items.length}`);
    total = page.total;
    if (page.items.length === 0) break;
    items.push(...page.items);
  } while (items.length < total);
  return { items, total };
}

// A request to the API; throws an Error carrying the problem document's detail.
async function api(method, path, body) {
  // X-Requested-With: the API then challenges with Bearer only, so that the browser does not
  // open its own Basic dialog over the login form below.
  const init = { method, headers: { 'X-Requested-With': 'afasim-web' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const sent = state.auth;
  if (sent) init.headers.Authorization = sent;
  let res = await fetch(API + path, init);
  if (res.status === 401) {
    // Only a refusal of the credential the page holds now sends it back to the login form: a
    // request sent before the login finished (a poll) can answer 401 after it, and must not
    // throw away the new token (that showed the login form a second time).
    if (state.auth === sent) {
      sessionStorage.removeItem('afasim-auth');
      state.auth = null;
      await login();
    }
    init.headers.Authorization = state.auth;
    res = await fetch(API + path, init);
  }
  if (res.status === 204) return null;
  const text = await res.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch (e) { /* not JSON */ }
  if (!res.ok) {
    const detail = json && json.detail ? json.detail : text.slice(0, 200);
    throw new Error(`${method} ${path} refused (${res.status}${json && json.title ? ' ' + json.title : ''}): ${detail}`);
  }
  return json;
}

function showError(e) {
  $('#error-text').textContent = e.message || String(e);
  $('#error').classList.remove('d-none');
}
function notice(text) {
  const n = $('#notice');
  n.textContent = text;
  n.classList.remove('d-none');
  clearTimeout(notice.timer);
  notice.timer = setTimeout(() => n.classList.add('d-none'), 4000);
}
const clearError = () => $('#error').classList.add('d-none');
// Runs `fn` and reports its error instead of throwing. The error stays until the next
// action of the user (background refreshes leave it alone).
async function guarded(fn) {
  try {
    await fn();
  } catch (e) {
    showError(e);
  }
}

// Asks before doing something that changes the array; `fn` runs on Confirm.
function confirmAction(text, fn) {
  $('#confirm-text').textContent = text;
  $('#confirm').classList.remove('d-none');
  $('#confirm-yes').onclick = () => { $('#confirm').classList.add('d-none'); clearError(); guarded(fn); };
  $('#confirm-no').onclick = () => $('#confirm').classList.add('d-none');
}

function bytes(n) {
  if (n === null || n === undefined) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = Math.abs(n), u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  const text = u === 0 || Math.abs(v - Math.round(v)) < 0.05 ? Math.round(v).toString() : v.toFixed(1);
  return (n < 0 ? '-' : '') + text + ' ' + units[u];
}
const seconds = (ns) => (ns / 1e9).toFixed(3) + ' s';
const dash = (v) => (v === null || v === undefined || v === '' ? '-' : v);
const badge = (text, kind) => `<span class="badge bg-${kind}">${esc(text)}</span>`;
const stateColour = (s) => ({
  online: 'success', active: 'success', healthy: 'success', on: 'success', up: 'success', 'write-back': 'success',
  degraded: 'warning', syncing: 'info', booting: 'info', holdup: 'warning', 'write-through': 'warning', warning: 'warning',
  failed: 'danger', removed: 'secondary', off: 'danger', cut: 'danger', vaulting: 'warning', error: 'danger',
  critical: 'danger', offline: 'danger', info: 'secondary', none: 'secondary',
})[s] || 'secondary';

// ---------------------------------------------------------------------------------------
// Views

function showView(view) {
  state.view = view;
  document.querySelectorAll('.view').forEach((v) => v.classList.toggle('d-none', v.id !== 'view-' + view));
  document.querySelectorAll('#tabs .nav-link').forEach((a) => a.classList.toggle('active', a.dataset.view === view));
  refreshView();
}

async function refreshView() {
  await guarded(refreshHeader);
  if (state.view === 'physical') await guarded(refreshPhysical);
  if (state.view === 'storage') await guarded(refreshStorage);
  if (state.view === 'events') await guarded(refreshFaults);
}

async function refreshHeader() {
  const s = await api('GET', '/system');
  state.system = s;
  $('#system-model').textContent = `${s.vendor} ${s.model} (${s.name})`;
  $('#system-state').className = 'badge bg-' + stateColour(s.state);
  $('#system-state').textContent = s.state;
  $('#sim-time').textContent = 't = ' + seconds(s.sim_time_ns);
  const alerts = await apiAll('/alerts');
  state.alerts = alerts.items;
  const count = $('#alert-count');
  count.textContent = alerts.total + (alerts.total === 1 ? ' alert' : ' alerts');
  count.classList.toggle('d-none', alerts.total === 0);
  renderAlerts();
}

function renderAlerts() {
  const items = (state.alerts || []).map((a) =>
    `<li class="list-group-item small">${badge(a.severity, stateColour(a.severity))} <b>${esc(a.kind)}</b>
     ${esc(a.object || 'array')}<br><span class="text-muted">${esc(a.message)}</span></li>`).join('');
  const none = '<li class="list-group-item small text-muted">none</li>';
  $('#physical-alerts').innerHTML = items || none;
  $('#alerts-list').innerHTML = items || none;
}

// --- Physical ---------------------------------------------------------------------------

async function refreshPhysical() {
  const [controllers, datapacs, volumes] = await Promise.all([
    api('GET', '/controllers'), api('GET', '/datapacs'), apiAll('/volumes')]);
  const owned = {};
  for (const v of volumes.items) (owned[v.owner_controller] ||= []).push(v.name);
  $('#chassis-name').textContent = state.system ? state.system.preset : '';
  $('#controllers').innerHTML = controllers.items.map((c) => `
    <div class="col-6"><div class="controller border rounded p-2" id="controller-${c.id}">
      <div class="d-flex justify-content-between"><b>Controller ${esc(c.name)}</b>${badge(c.state, stateColour(c.state))}</div>
      <div class="small">cache ${badge(c.cache_mode, stateColour(c.cache_mode))} ${esc(c.cache_mode_reason)}</div>
      <div class="small">dirty ${bytes(c.dirty_bytes)} · cached ${bytes(c.cached_bytes)} · mirror of peer ${bytes(c.mirrored_bytes)}</div>
      <div class="small">owns ${c.owned_volumes} volume(s): ${esc((owned[c.id] || []).join(', ') || '-')}</div>
    </div></div>`).join('');
  $('#datapacs').innerHTML = datapacs.items.map((d) => `
    <div class="col-6"><div class="datapac border rounded p-2" id="datapac-${d.id}">
      <div class="d-flex justify-content-between"><b>${esc(d.name)}</b><span class="small">pool ${dash(d.pool_id)} · flash · ${d.drive_count} SSDs</span></div>
      <div class="drives">${d.drives.map(driveTile).join('')}</div>
    </div></div>`).join('');
  renderPower(state.system);
}

function driveTile(d) {
  const wear = d.wear.percent_endurance_used;
  const slow = d.latency_multiplier > 1 ? `, slowed ×${d.latency_multiplier}` : '';
  return `<div class="drive drive-${esc(d.state)}${slow ? ' drive-slow' : ''}" id="drive-${d.id}" title="SSD ${d.id}, slot ${d.slot}: ${esc(d.model)}, ${esc(d.state)}${slow}, ${wear.toFixed(2)} % of rated endurance used">
    <div class="drive-id">${d.id}</div>
    <div class="wear"><div class="wear-bar" style="width:${Math.min(100, wear).toFixed(1)}%"></div></div>
    <div class="drive-wear">${wear.toFixed(1)}%</div></div>`;
}

function renderPower(s) {
  if (!s) return;
  const p = s.power, c = p.supercaps;
  const pct = c.capacity_joules > 0 ? (100 * c.energy_joules / c.capacity_joules) : 0;
  $('#power').innerHTML = `
    <div>mains ${badge(p.mains, stateColour(p.mains))} power ${badge(p.state, stateColour(p.state))}
      link ${badge(p.inter_controller_link, stateColour(p.inter_controller_link))}</div>
    <div class="mt-2 small">${c.packs} supercap packs ${c.degraded ? badge('degraded', 'warning') : badge('healthy', 'success')}
      ${c.charging ? badge('charging', 'info') : ''}</div>
    <div class="progress mt-1" title="stored energy"><div class="progress-bar" style="width:${pct.toFixed(0)}%">${Math.round(c.energy_joules)} J</div></div>
    <div class="small text-muted">of ${Math.round(c.capacity_joules)} J; a vault of full caches needs ${Math.round(c.vault_energy_joules)} J; hold-up ${c.holdup_seconds} s</div>`;
  const r = s.rebuild;
  $('#rebuild').innerHTML = r && (r.active || r.total_bytes > 0)
    ? `<div class="small">${r.active ? 'rebuilding drive ' + esc(r.drive) : 'last rebuild'}</div>
       <div class="progress"><div class="progress-bar bg-warning" style="width:${r.percent.toFixed(1)}%">${r.percent.toFixed(1)} %</div></div>`
    : '<span class="small text-muted">no rebuild</span>';
}

// --- Storage ----------------------------------------------------------------------------

async function refreshStorage() {
  const [pools, volumes, hosts, mappings, policies] = await Promise.all([
    apiAll('/pools'), apiAll('/volumes'), apiAll('/hosts'),
    apiAll('/mappings'), apiAll('/qos-policies')]);
  state.volumes = volumes.items;
  state.hosts = hosts.items;
  state.policies = policies.items;
  $('#pools-table tbody').innerHTML = pools.items.map((p) => {
    const c = p.capacity, pct = c.raw_usable_bytes > 0 ? 100 * c.raw_allocated_bytes / c.raw_usable_bytes : 0;
    return `<tr><td>${p.id}</td><td>${esc(p.name)}</td><td>${p.datapac_ids.join(', ')}</td><td>${p.raid_types.join(', ')}</td>
      <td>${p.volume_count}</td><td>${bytes(c.provisioned_bytes)}</td>
      <td><div class="progress" title="${pct.toFixed(1)} % of raw usable allocated; thresholds ${p.space_thresholds_percent.join(', ')} %">
        <div class="progress-bar ${pct >= p.space_thresholds_percent[0] ? 'bg-warning' : ''}" style="width:${Math.max(pct, 0.5).toFixed(1)}%"></div></div>
        <span class="small">${bytes(c.raw_allocated_bytes)} / ${bytes(c.raw_usable_bytes)} (${pct.toFixed(1)} %)</span></td>
      <td>${bytes(c.free_bytes.RAID10)}</td><td>${bytes(c.free_bytes.RAID5)}</td></tr>`;
  }).join('');
  $('#volumes-table tbody').innerHTML = volumes.items.map((v) => `
    <tr id="volume-row-${v.id}"><td>${v.id}</td><td class="volume-name">${esc(v.name)}</td><td>${bytes(v.capacity_bytes)}</td><td>${v.raid_type}</td>
      <td>${v.provisioning}</td><td>${bytes(v.allocated_bytes)}</td>
      <td>${dash(v.effective_qos.min_iops)} / ${dash(v.effective_qos.max_iops)} / ${dash(v.effective_qos.burst_iops)}</td>
      <td>${v.owner_controller ? 'ABCD'[v.owner_controller - 1] : '-'}</td><td>${badge(v.state, stateColour(v.state))}</td>
      <td>${v.qos_status.current_iops}</td>
      <td class="text-nowrap"><button class="btn btn-outline-primary btn-sm" data-edit="${v.id}">Edit</button>
        <button class="btn btn-outline-danger btn-sm" data-delete-volume="${v.id}">Delete</button></td></tr>`).join('');
  $('#hosts-table tbody').innerHTML = hosts.items.map((h) => `<tr><td>${h.id}</td><td>${esc(h.name)}</td>
      <td class="small">${h.initiators.map((i) => esc(i.type + ':' + i.address)).join('<br>')}</td><td>${h.mapping_count}</td>
      <td><button class="btn btn-outline-danger btn-sm" data-delete-host="${h.id}">Delete</button></td></tr>`).join('');
  const vname = (id) => (volumes.items.find((v) => v.id === id) || { name: id }).name;
  const hname = (id) => (hosts.items.find((h) => h.id === id) || { name: id }).name;
  $('#mappings-table tbody').innerHTML = mappings.items.map((m) => `<tr><td>${m.id}</td><td>${esc(vname(m.volume_id))}</td>
      <td>${esc(hname(m.host_id))}</td><td>${m.lun}</td><td>${m.access}</td>
      <td><button class="btn btn-outline-danger btn-sm" data-delete-mapping="${m.id}">Unmap</button></td></tr>`).join('');
  $('#qos-table tbody').innerHTML = policies.items.map((q) => `<tr><td>${q.id}</td><td>${esc(q.name)}</td>
      <td>${dash(q.min_iops)}</td><td>${dash(q.max_iops)}</td><td>${dash(q.burst_iops)}</td><td>${q.volume_count}</td>
      <td><button class="btn btn-outline-danger btn-sm" data-delete-qos="${q.id}">Delete</button></td></tr>`).join('');
  fillSelect($('#mapping-form [name=volume_id]'), volumes.items);
  fillSelect($('#mapping-form [name=host_id]'), hosts.items);
  fillSelect($('#volume-form [name=qos_policy_id]'), [{ id: '', name: 'none' }, ...policies.items]);
}

function fillSelect(select, items) {
  const keep = select.value;
  select.innerHTML = items.map((i) => `<option value="${i.id}">${esc(i.name)}</option>`).join('');
  if ([...select.options].some((o) => o.value === keep)) select.value = keep;
}

// The form's non-empty fields; numbers for the IOPS ones.
function formFields(form, numeric) {
  const out = {};
  for (const el of form.elements) {
    if (!el.name || el.value === '') continue;
    out[el.name] = numeric.includes(el.name) ? Number(el.value) : el.value;
  }
  return out;
}

async function submitVolume(ev) {
  ev.preventDefault();
  clearError();
  const form = ev.target;
  const f = formFields(form, ['min_iops', 'max_iops', 'burst_iops', 'qos_policy_id']);
  const id = f.id;
  const body = { name: f.name, capacity_bytes: /^\d+$/.test(f.capacity) ? Number(f.capacity) : f.capacity };
  for (const k of ['min_iops', 'max_iops', 'burst_iops']) body[k] = f[k] === undefined ? (id ? null : undefined) : f[k];
  if (id) {
    body.qos_policy_id = f.qos_policy_id === undefined ? null : f.qos_policy_id;
    if (f.preferred_controller) body.preferred_controller = f.preferred_controller;
    await guarded(async () => {
      await api('PATCH', '/volumes/' + id, body);
      notice(`volume ${f.name} updated`);
      endEdit();
    });
  } else {
    Object.assign(body, { raid_type: f.raid_type, provisioning: f.provisioning });
    if (f.preferred_controller) body.preferred_controller = f.preferred_controller;
    if (f.qos_policy_id !== undefined) body.qos_policy_id = f.qos_policy_id;
    await guarded(async () => {
      const v = await api('POST', '/volumes', body);
      notice(`volume ${v.name} created (id ${v.id})`);
      form.reset();
    });
  }
  await guarded(refreshStorage);
}

function startEdit(id) {
  const v = state.volumes.find((x) => x.id === id);
  const form = $('#volume-form');
  form.elements.id.value = v.id;
  form.elements.name.value = v.name;
  form.elements.capacity.value = v.capacity_bytes;
  for (const k of ['min_iops', 'max_iops', 'burst_iops']) form.elements[k].value = v[k] ?? '';
  form.elements.qos_policy_id.value = v.qos_policy_id ?? '';
  form.elements.raid_type.disabled = form.elements.provisioning.disabled = true;
  $('#volume-submit').textContent = `Save volume ${v.id}`;
  $('#volume-cancel').classList.remove('d-none');
}

function endEdit() {
  const form = $('#volume-form');
  form.reset();
  form.elements.id.value = '';
  form.elements.raid_type.disabled = form.elements.provisioning.disabled = false;
  $('#volume-submit').textContent = 'Create volume';
  $('#volume-cancel').classList.add('d-none');
}

async function submitHost(ev) {
  ev.preventDefault();
  clearError();
  const f = formFields(ev.target, []);
  const initiators = [];
  if (f.initiator) {
    const colon = f.initiator.indexOf(':');
    initiators.push({ type: f.initiator.slice(0, colon), address: f.initiator.slice(colon + 1) });
  }
  await guarded(async () => {
    const h = await api('POST', '/hosts', { name: f.name, initiators });
    notice(`host ${h.name} added`);
    ev.target.reset();
  });
  await guarded(refreshStorage);
}

async function submitMapping(ev) {
  ev.preventDefault();
  clearError();
  const f = formFields(ev.target, ['volume_id', 'host_id', 'lun']);
  await guarded(async () => {
    const m = await api('POST', '/mappings', f);
    notice(`mapping ${m.id} created: LUN ${m.lun}`);
  });
  await guarded(refreshStorage);
}

async function submitQos(ev) {
  ev.preventDefault();
  clearError();
  const f = formFields(ev.target, ['min_iops', 'max_iops', 'burst_iops']);
  await guarded(async () => {
    const q = await api('POST', '/qos-policies', f);
    notice(`QoS policy ${q.name} added`);
    ev.target.reset();
  });
  await guarded(refreshStorage);
}

function onStorageClick(ev) {
  const b = ev.target.closest('button');
  if (!b) return;
  const d = b.dataset;
  const del = (what, path) => confirmAction(`Delete ${what}?`, async () => {
    await api('DELETE', path);
    notice(`${what} deleted`);
    await refreshStorage();
  });
  if (d.edit) startEdit(Number(d.edit));
  else if (d.deleteVolume) del('volume ' + d.deleteVolume, '/volumes/' + d.deleteVolume);
  else if (d.deleteHost) del('host ' + d.deleteHost, '/hosts/' + d.deleteHost);
  else if (d.deleteMapping) del('mapping ' + d.deleteMapping, '/mappings/' + d.deleteMapping);
  else if (d.deleteQos) del('QoS policy ' + d.deleteQos, '/qos-policies/' + d.deleteQos);
}

// --- Performance ------------------------------------------------------------------------

const WINDOW_S = 300;
const COLOURS = ['#0d6efd', '#dc3545', '#198754', '#fd7e14', '#6f42c1', '#20c997', '#d63384', '#6c757d'];

function makeChart(id, title, unit) {
  const chart = new Chart(document.getElementById(id), {
    type: 'line',
    data: { datasets: [] },
    options: {
      animation: false, parsing: false, normalized: true, maintainAspectRatio: false,
      elements: { point: { radius: 0 }, line: { borderWidth: 1.5 } },
      plugins: { title: { display: true, text: title }, legend: { labels: { boxWidth: 12 } } },
      scales: { x: { type: 'linear', title: { display: true, text: 'simulated time, s' } },
        y: { beginAtZero: true, title: { display: true, text: unit } } },
    },
  });
  state.charts[id] = chart;
  return chart;
}

// One colour per object ("A", "web01") in every chart, in the order objects are first seen;
// its mean latency is dashed beside its p99 (new-user trial 17: an object's colour changed
// from chart to chart, and its p99 and mean had two).
function colourOf(object) {
  state.colours = state.colours || new Map();
  if (!state.colours.has(object)) state.colours.set(object, COLOURS[state.colours.size % COLOURS.length]);
  return state.colours.get(object);
}

// The dataset `label` of `chart` for `object`, created on first use.
function dataset(chart, object, label) {
  let d = chart.data.datasets.find((x) => x.label === label);
  if (!d) {
    const colour = colourOf(object);
    d = { label, data: [], borderColor: colour, backgroundColor: colour, borderDash: label.endsWith(' mean') ? [4, 3] : [] };
    chart.data.datasets.push(d);
  }
  return d;
}

function append(chart, object, label, points) {
  const d = dataset(chart, object, label);
  d.data.push(...points);
  const newest = d.data.length ? d.data[d.data.length - 1].x : 0;
  while (d.data.length && d.data[0].x < newest - WINDOW_S) d.data.shift();
}

// One object's new samples into the three charts of its row.
async function pollSeries(path, label, charts) {
  const since = state.since[path];
  const r = await api('GET', path + (since !== undefined ? '?since=' + since : '?limit=' + WINDOW_S));
  if (!r.samples.length) return;
  state.since[path] = r.samples[r.samples.length - 1].time_ns;
  const pts = (f) => r.samples.map((s) => ({ x: s.time_ns / 1e9, y: f(s) }));
  append(charts.iops, label, label, pts((s) => s.iops));
  append(charts.mbps, label, label, pts((s) => s.bytes_per_second / 1e6));
  append(charts.latency, label, label + ' p99', pts((s) => s.latency_us_p99));
  append(charts.latency, label, label + ' mean', pts((s) => s.latency_us_mean));
}

async function pollPerformance() {
  if (!state.charts['chart-ctl-iops']) return;
  const ctl = { iops: state.charts['chart-ctl-iops'], mbps: state.charts['chart-ctl-mbps'], latency: state.charts['chart-ctl-latency'] };
  const vol = { iops: state.charts['chart-vol-iops'], mbps: state.charts['chart-vol-mbps'], latency: state.charts['chart-vol-latency'] };
  const volumes = (await api('GET', '/volumes?limit=8')).items;
  await Promise.all([
    pollSeries('/controllers/1/performance', 'A', ctl),
    pollSeries('/controllers/2/performance', 'B', ctl),
    ...volumes.map((v) => pollSeries(`/volumes/${v.id}/performance`, v.name, vol)),
  ]);
  // Deleted volumes leave the charts.
  const names = new Set(volumes.flatMap((v) => [v.name, v.name + ' p99', v.name + ' mean']));
  for (const c of Object.values(vol)) c.data.datasets = c.data.datasets.filter((d) => names.has(d.label));
  if (state.view === 'performance') Object.values(state.charts).forEach((c) => c.update('none'));
}

function setupCharts() {
  state.since = {};
  if (typeof Chart === 'undefined') return;  // the library failed to load: the rest still works
  makeChart('chart-ctl-iops', 'IOPS per controller', 'IOPS');
  makeChart('chart-ctl-mbps', 'MB/s per controller', 'MB/s');
  makeChart('chart-ctl-latency', 'Latency per controller (p99, mean)', 'µs');
  makeChart('chart-vol-iops', 'IOPS per volume', 'IOPS');
  makeChart('chart-vol-mbps', 'MB/s per volume', 'MB/s');
  makeChart('chart-vol-latency', 'Latency per volume (p99, mean)', 'µs');
}

// --- Events and faults ------------------------------------------------------------------

function eventRow(e) {
  return `<tr class="event-${esc(e.severity)}" data-id="${e.id}"><td>${e.id}</td><td class="text-nowrap">${seconds(e.time_ns)}</td>
    <td>${badge(e.severity, stateColour(e.severity))}</td><td>${esc(e.category)}</td><td>${esc(e.object || '-')}</td>
    <td>${esc(e.message)}</td></tr>`;
}

function addEvent(e) {
  if (e.id <= state.lastEventId) return;
  state.lastEventId = e.id;
  const body = $('#events-table tbody');
  body.insertAdjacentHTML('afterbegin', eventRow(e));
  while (body.rows.length > 500) body.deleteRow(body.rows.length - 1);
  if (e.category === 'alert') guarded(refreshHeader);
}

async function startEvents() {
  const page = await api('GET', '/events?limit=100');
  page.items.slice().reverse().forEach(addEvent);
  state.lastEventId = page.next_after;
  connectStream();
}

// The event stream, read with fetch() rather than EventSource so that it carries the same
// Authorization header as every other request; reconnects where it stopped (Last-Event-ID).
async function connectStream() {
  const status = (text, kind) => { $('#stream-state').textContent = text; $('#stream-state').className = 'badge bg-' + kind; };
  for (;;) {
    try {
      const headers = { 'Last-Event-ID': String(state.lastEventId), 'X-Requested-With': 'afasim-web' };
      const sent = state.auth;
      if (sent) headers.Authorization = sent;
      const res = await fetch(`${API}/events/stream`, { headers });
      if (res.status === 401) {
        if (state.auth === sent) await login();  // else: logged in meanwhile, retry with the token
        continue;
      }
      if (!res.ok) throw new Error('stream: ' + res.status);
      status('live', 'success');
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const message = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = message.split('\n').find((l) => l.startsWith('data: '));
          if (data) addEvent(JSON.parse(data.slice(6)));
        }
      }
    } catch (e) { /* the server went away or refused: try again below */ }
    status('reconnecting', 'warning');
    await new Promise((r) => setTimeout(r, 2000));
  }
}

// Asks for a user and password once the API answers 401, and keeps a session token
// (POST /sessions) for every later request; resolves when logged in.
function login() {
  if (state.loggingIn) return state.loggingIn;
  state.loggingIn = new Promise((resolve) => {
    const form = $('#login-form');
    $('#login').classList.remove('d-none');
    form.onsubmit = async (ev) => {
      ev.preventDefault();
      const credentials = { username: form.elements.user.value, password: form.elements.password.value };
      const res = await fetch(API + '/sessions', { method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Requested-With': 'afasim-web' },
        body: JSON.stringify(credentials) });
      const body = await res.json().catch(() => ({}));
      if (!res.ok || !body.token) { $('#login-error').textContent = body.detail || ('login refused: ' + res.status); return; }
      state.auth = 'Bearer ' + body.token;
      sessionStorage.setItem('afasim-auth', state.auth);
      $('#login').classList.add('d-none');
      $('#login-error').textContent = '';
      state.loggingIn = null;
      resolve();
    };
  });
  return state.loggingIn;
}

const UNDO = { drive_fail: 'drive_replace', drive_pull: 'drive_replace', drive_slow: 'drive_restore_speed',
  controller_fail: 'controller_restore', link_cut: 'link_restore', power_loss: 'power_restore', supercap_degrade: 'supercap_restore' };

function faultTarget(f) {
  return f.drive ? 'drive ' + f.drive : f.controller ? 'controller ' + 'AB'[f.controller - 1] : 'array';
}

// The ids of faults a later fault already undid (a power_loss followed by its power_restore):
// their Clear would be refused (409), so it is not offered (new-user trial 17). One pass,
// newest first.
function undoneIds(faults) {
  const later = new Set();
  const undone = new Set();
  for (const f of faults.slice().sort((a, b) => b.id - a.id)) {
    if (UNDO[f.type] && later.has(UNDO[f.type] + ' ' + faultTarget(f))) undone.add(f.id);
    later.add(f.type + ' ' + faultTarget(f));
  }
  return undone;
}

async function refreshFaults() {
  const faults = await apiAll('/faults');
  const undone = undoneIds(faults.items);
  $('#faults-table tbody').innerHTML = faults.items.slice().reverse().map((f) => `<tr><td>${f.id}</td>
    <td class="text-nowrap">${seconds(f.time_ns)}</td><td>${esc(f.type)}</td><td>${esc(faultTarget(f))}</td>
    <td>${!UNDO[f.type] ? '' : undone.has(f.id) ? '<span class="text-muted">cleared</span>' :
      `<button class="btn btn-outline-secondary btn-sm" data-clear="${f.id}">Clear</button>`}</td></tr>`).join('');
  state.faults = faults.items;
}

function injectFault(body) {
  confirmAction(`Inject ${body.type}${body.drive ? ' on drive ' + body.drive : ''}${body.controller ? ' on controller ' + body.controller : ''}?`,
    async () => {
      const f = await api('POST', '/faults', body);
      notice(`fault ${f.id} injected: ${f.type}`);
      await refreshFaults();
      await refreshHeader();
    });
}

function submitFault(ev) {
  ev.preventDefault();
  clearError();
  const f = formFields(ev.target, ['drive', 'latency_multiplier']);
  const needs = { drive: /^drive_/, controller: /^controller_/, latency_multiplier: /^drive_slow$/ };
  const body = { type: f.type };
  for (const [k, re] of Object.entries(needs)) if (re.test(f.type) && f[k] !== undefined) body[k] = f[k];
  injectFault(body);
}

function onFaultClick(ev) {
  const b = ev.target.closest('button[data-clear]');
  if (!b) return;
  const f = state.faults.find((x) => x.id === Number(b.dataset.clear));
  const body = { type: UNDO[f.type] };
  if (f.drive) body.drive = f.drive;
  if (f.controller) body.controller = f.controller;
  injectFault(body);
}

// ---------------------------------------------------------------------------------------

function init() {
  document.querySelectorAll('#tabs .nav-link').forEach((a) => a.addEventListener('click', (ev) => {
    ev.preventDefault();
    history.replaceState(null, '', '#' + a.dataset.view);
    showView(a.dataset.view);
  }));
  window.addEventListener('hashchange', () => {
    const view = location.hash.slice(1);
    if (['physical', 'storage', 'performance', 'events'].includes(view) && view !== state.view) showView(view);
  });
  $('#error-close').addEventListener('click', clearError);
  $('#volume-form').addEventListener('submit', submitVolume);
  $('#volume-cancel').addEventListener('click', endEdit);
  $('#host-form').addEventListener('submit', submitHost);
  $('#mapping-form').addEventListener('submit', submitMapping);
  $('#qos-form').addEventListener('submit', submitQos);
  $('#view-storage').addEventListener('click', onStorageClick);
  $('#fault-form').addEventListener('submit', submitFault);
  $('#faults-table').addEventListener('click', onFaultClick);
  setupCharts();
  guarded(startEvents);
  const initial = location.hash.slice(1);
  showView(['physical', 'storage', 'performance', 'events'].includes(initial) ? initial : 'physical');
  setInterval(() => guarded(pollPerformance), 1000);
  setInterval(() => { if (state.view !== 'performance') refreshView(); }, 3000);
  guarded(pollPerformance);
}

init();
