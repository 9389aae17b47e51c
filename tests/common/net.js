/*
 * HTTP helpers for the tests written for Node.js (tests/browser, tests/docs, tests/grafana): a
 * free port on 127.0.0.1, a request with an optional bearer token, and whether a gpuschedd
 * answers /healthz.
 */
'use strict';
const http = require('http');
const net = require('net');

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = s.address().port;
      s.close(() => resolve(port));
    });
  });
}

/* request() - @method @path on 127.0.0.1:@port with @token and @body (sent as JSON); resolves
 * to {status, text, headers}. */
function request(port, method, path, token, body) {
  return new Promise((resolve, reject) => {
    const headers = token ? {Authorization: 'Bearer ' + token} : {};
    if (body) headers['Content-Type'] = 'application/json';
    const req = http.request({host: '127.0.0.1', port, path, method, headers, timeout: 30000},
                             (res) => {
                               let text = '';
                               res.on('data', (d) => (text += d));
                               res.on('end', () => resolve({status: res.statusCode, text,
                                                            headers: res.headers}));
                             });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(method + ' ' + path + ': timed out')));
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

/* healthy() - whether a gpuschedd on @port answers GET /healthz with 200. */
function healthy(port) {
  return request(port, 'GET', '/healthz').then((r) => r.status === 200, () => false);
}

module.exports = {freePort, request, healthy};
